// This host's name as gethostname gives it: what the results file, event file names and errors call a
// node.
#pragma once

#include <string>

namespace ft {

// gethostname's answer, or "" when the system gives none.
std::string host_name();

}  // namespace ft
