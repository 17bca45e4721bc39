// Shared fixtures for the data_prep tests: per-test scratch folders under FT_TEST_TMP, writers for
// raw, gzip, PNG and JPEG files, and the check that a failed conversion left no output behind.
#pragma once

#include <gtest/gtest.h>
#include <png.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data_prep/prep_pipeline.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft::prep::testing {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

// FT_TEST_TMP/data_prep/<Suite>.<Test>/, emptied: reruns reuse it, so nothing piles up.
inline fs::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::path(ft::test::temp_dir()) / "data_prep" / (std::string(info->test_suite_name()) + "." + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline void write_file(const fs::path& path, const Bytes& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline void write_text(const fs::path& path, const std::string& text) {
  write_file(path, Bytes(text.begin(), text.end()));
}

inline void write_gz(const fs::path& path, const Bytes& bytes) {
  fs::create_directories(path.parent_path());
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr) << path;
  ASSERT_EQ(gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
}

// rgb: height * width * 3 bytes, row-major.
inline void write_png(const fs::path& path, int height, int width, const Bytes& rgb) {
  fs::create_directories(path.parent_path());
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB;
  ASSERT_NE(png_image_write_to_file(&image, path.c_str(), 0, rgb.data(), 0, nullptr), 0) << image.message;
}

inline Bytes jpeg_bytes(int height, int width, const Bytes& rgb, int quality = 100) {
  tjhandle handle = tjInitCompress();
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int rc =
      tjCompress2(handle, rgb.data(), width, 0, height, TJPF_RGB, &buffer, &size, TJSAMP_444, quality, 0);
  Bytes out;
  if (rc == 0) out.assign(buffer, buffer + size);
  tjFree(buffer);
  tjDestroy(handle);
  EXPECT_EQ(rc, 0) << "tjCompress2 failed";
  return out;
}

// A smooth RGB test image (JPEG-friendly), distinct per `seed`.
inline Bytes gradient(int height, int width, int seed) {
  Bytes rgb(static_cast<std::size_t>(height) * width * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<std::size_t>(y) * width + x) * 3 + c] =
            static_cast<std::uint8_t>(20 + 4 * y + 3 * x + 40 * c + 10 * seed);
  return rgb;
}

inline PrepOptions options_for(Format format, const fs::path& input, const fs::path& output) {
  PrepOptions o;
  o.format = format;
  o.input = input.string();
  o.output = output.string();
  return o;
}

// Names of the shard files and staging folders in dir (empty when dir is not a folder).
inline std::vector<std::string> outputs_in(const fs::path& dir) {
  std::vector<std::string> found;
  if (!fs::is_directory(dir)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".h5" || name.find(".partial-") != std::string::npos)
      found.push_back(name);
  }
  return found;
}

// Runs the conversion, expects ft::Error mentioning `file` and `problem`, and no shard or staging
// folder in the output afterwards.
inline void expect_prep_fails(const PrepOptions& options, const std::string& file,
                              const std::string& problem) {
  std::string message;
  try {
    run_prep(options);
  } catch (const Error& e) {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << "run_prep succeeded but should fail naming " << file;
  EXPECT_NE(message.find(file), std::string::npos) << "message does not name " << file << ": " << message;
  EXPECT_NE(message.find(problem), std::string::npos)
      << "message does not say '" << problem << "': " << message;
  EXPECT_TRUE(outputs_in(options.output).empty()) << "output left behind in " << options.output;
}

}  // namespace ft::prep::testing
