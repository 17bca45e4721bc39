// Expansion of file and folder arguments into the list of image files to decode, recursing through
// folders in sorted order so that the same tree always gives the same rows in the same order.
#include "data_prep/image_inputs.h"

#include <algorithm>

#include "data_prep/input_files.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

// Appends the images below `dir` to `files` (unsorted) and what is left out to `skipped`.
void walk_folder(const std::string& dir, std::vector<std::string>& files, std::vector<std::string>& skipped) {
  for (const std::string& name : paths::list_directory(dir)) {
    const std::string path = paths::join(dir, name);
    if (name.front() == '.')
      skipped.push_back(path);
    else if (paths::is_directory(path))
      walk_folder(path, files, skipped);
    else if (has_image_extension(name) && paths::is_regular_file(path))
      files.push_back(path);
    else
      skipped.push_back(path);
  }
}

}  // namespace

ImageInputs list_image_inputs(const std::vector<std::string>& arguments) {
  FT_REQUIRE(!arguments.empty(), "no image files or folders given");
  ImageInputs inputs;
  for (const std::string& argument : arguments) {
    FT_REQUIRE(paths::exists(argument), argument, ": no such file or folder");
    if (!paths::is_directory(argument)) {
      FT_REQUIRE(paths::is_regular_file(argument), argument, ": not a regular file or folder");
      inputs.files.push_back(argument);
      continue;
    }
    std::vector<std::string> found;
    walk_folder(argument, found, inputs.skipped);
    FT_REQUIRE(!found.empty(), argument, ": folder holds no .jpg, .jpeg or .png files");
    std::sort(found.begin(), found.end());
    inputs.files.insert(inputs.files.end(), found.begin(), found.end());
  }
  return inputs;
}

}  // namespace ft::prep
