// Reading a whole text file, the one way the project does it: a file that cannot be opened or read
// is an ft::Error naming the file and the reason, never an empty string.
#pragma once

#include <string>

namespace ft {

// The file's contents. `what` names the file's role in the message, e.g. "config file" gives
// "cannot read config file run.yaml: No such file or directory".
std::string read_text_file(const std::string& path, const std::string& what = "file");

}  // namespace ft
