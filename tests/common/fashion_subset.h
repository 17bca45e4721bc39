// A small Fashion-MNIST shard set for CPU training tests, made once per test folder: the first `limit` images
// of each split of Debian's dataset-fashion-mnist, in one shard.
#pragma once

#include <cstdint>
#include <string>

#include "data_prep/prep_pipeline.h"
#include "io/paths.h"
#include "test_paths.h"

namespace ft::test {

inline bool have_fashion_mnist() { return paths::exists(fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"); }

// temp_dir()/<name>, prepared unless its shards are there.
inline std::string fashion_subset(const std::string& name, std::int64_t limit) {
  const std::string out = temp_dir() + "/" + name;
  if (paths::exists(out + "/test-00000-of-00001.h5")) return out;
  prep::PrepOptions options;
  options.format = prep::Format::idx;
  options.input = fashion_mnist_dir();
  options.output = out;
  options.shards = 1;
  options.limit = limit;
  prep::run_prep(options);
  return out;
}

}  // namespace ft::test
