// The image files named on a command line: files taken as given, folders walked recursively for the
// .jpg/.jpeg/.png files of fusetrain-prep's folder rule, with whatever else a folder holds reported.
#pragma once

#include <string>
#include <vector>

namespace ft::prep {

struct ImageInputs {
  std::vector<std::string> files;    // to decode, in order
  std::vector<std::string> skipped;  // folder entries left out: hidden, or not .jpg/.jpeg/.png
};

// A file argument is taken whatever its name (the decoder tells JPEG and PNG apart by content). A folder
// argument contributes every .jpg, .jpeg and .png file (any case) below it, sorted by path; hidden entries
// (names starting with '.') and other files are listed in `skipped`. Arguments keep their order. A path
// that does not exist and a folder without any image file are an ft::Error naming them.
ImageInputs list_image_inputs(const std::vector<std::string>& arguments);

}  // namespace ft::prep
