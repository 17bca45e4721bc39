// Program version and the git commit it was built from, for --version and results provenance.
// Defined in a file generated at configure time (version.cpp.in).
#pragma once

namespace ft {
const char* program_version();
const char* git_commit();
}  // namespace ft
