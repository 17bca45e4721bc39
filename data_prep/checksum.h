// SHA-256 of a data set's raw input files, stored as the shards' source_sha256 attribute so a shard
// can be traced back to the exact bytes it was made from.
#pragma once

#include <string>
#include <vector>

namespace ft::prep {

// Lower-case hex SHA-256 of the files' contents concatenated in sorted path order (duplicates once),
// i.e. what `cat $(sorted paths) | sha256sum` prints.
std::string sha256_of_files(std::vector<std::string> paths);

}  // namespace ft::prep
