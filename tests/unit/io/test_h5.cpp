// Tests of the HDF5 layer in src/io/h5.h: typed and chunked datasets, hyperslab row reads, strings,
// every attribute type, and the messages for missing objects, wrong shapes and non-HDF5 files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "error_of.h"
#include "io/h5.h"
#include "test_paths.h"

namespace ft::h5 {
namespace {

namespace fs = std::filesystem;

fs::path scratch_file(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::path(ft::test::temp_dir()) / "io" / (std::string(info->test_suite_name()) + "." + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / name;
}

using test::error_of;

TEST(H5, DatasetsRoundTripWithChunkingAndRowReads) {
  const std::string path = scratch_file("data.h5").string();
  std::vector<std::uint8_t> images(5 * 2 * 3 * 1);
  for (std::size_t i = 0; i < images.size(); ++i) images[i] = static_cast<std::uint8_t>(i);
  const std::vector<std::int32_t> labels = {4, -1, 7, 0, 2};
  const std::vector<double> values = {0.5, -2.25};
  {
    Handle file = create_file(path);
    write(file, "images", images.data(), {5, 2, 3, 1}, {2, 2, 3, 1});
    write(file, "labels", labels.data(), {5});
    Handle group = create_group(file, "stats");
    write(group, "values", values.data(), {2});
    write_strings(file, "names", {"alpha", "", "gamma"});
  }
  Handle file = open_file(path);
  EXPECT_EQ(dims(file, "images"), (std::vector<hsize_t>{5, 2, 3, 1}));
  EXPECT_EQ(element_type(file, "images"), std::make_pair(H5T_INTEGER, std::size_t{1}));
  EXPECT_EQ(element_type(file, "labels"), std::make_pair(H5T_INTEGER, std::size_t{4}));
  EXPECT_EQ(read_all<std::uint8_t>(file, "images"), images);
  EXPECT_EQ(read_all<std::int32_t>(file, "labels"), labels);
  EXPECT_TRUE(exists(file, "stats"));
  EXPECT_TRUE(exists(file, "stats/values"));
  EXPECT_FALSE(exists(file, "nothing"));
  EXPECT_EQ(read_all<double>(open_group(file, "stats"), "values"), values);
  EXPECT_EQ(read_strings(file, "names"), (std::vector<std::string>{"alpha", "", "gamma"}));

  std::vector<std::uint8_t> rows(2 * 6);
  read_rows(file, "images", 2, 2, rows.data());  // crosses the chunk boundary at row 2..3
  EXPECT_EQ(rows, std::vector<std::uint8_t>(images.begin() + 12, images.begin() + 24));
  std::int32_t last = 0;
  read_rows(file, "labels", 4, 1, &last);
  EXPECT_EQ(last, 2);
}

TEST(H5, AttributesOfEveryType) {
  const std::string path = scratch_file("attrs.h5").string();
  {
    Handle file = create_file(path);
    set_attr(file, "name", "cifar10");
    set_attr(file, "classes", std::vector<std::string>{"cat", "dog"});
    set_attr(file, "count", std::int64_t{60000});
    set_attr(file, "rate", 0.125);
    set_attr(file, "mean", std::vector<double>{0.49, 0.48, 0.45});
    set_attr(file, "count", std::int64_t{50000});  // overwrites
  }
  Handle file = open_file(path);
  EXPECT_TRUE(has_attr(file, "name"));
  EXPECT_FALSE(has_attr(file, "other"));
  EXPECT_EQ(attr_string(file, "name"), "cifar10");
  EXPECT_EQ(attr_strings(file, "classes"), (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(attr_int(file, "count"), 50000);
  EXPECT_DOUBLE_EQ(attr_double(file, "rate"), 0.125);
  EXPECT_EQ(attr_doubles(file, "mean"), (std::vector<double>{0.49, 0.48, 0.45}));
}

TEST(H5, ErrorsNameWhatIsMissingOrWrong) {
  const fs::path path = scratch_file("errors.h5");
  {
    Handle file = create_file(path.string());
    const std::int32_t labels[3] = {1, 2, 3};
    write(file, "labels", labels, {3});
    set_attr(file, "mean", std::vector<double>{0.1, 0.2});
  }
  Handle file = open_file(path.string());
  EXPECT_NE(error_of([&] { attr_string(file, "dataset"); }).find("missing HDF5 attribute 'dataset'"),
            std::string::npos);
  EXPECT_NE(error_of([&] { attr_int(file, "mean"); }).find("HDF5 attribute 'mean' is not a scalar"),
            std::string::npos);
  EXPECT_NE(error_of([&] { attr_string(file, "mean"); }).find("'mean' is not a string"), std::string::npos);
  EXPECT_NE(error_of([&] { dims(file, "images"); }).find("missing HDF5 dataset 'images'"), std::string::npos);
  EXPECT_NE(error_of([&] { open_group(file, "stats"); }).find("missing HDF5 group 'stats'"),
            std::string::npos);
  std::int32_t out[2];
  EXPECT_NE(error_of([&] {
              read_rows(file, "labels", 2, 2, out);
            }).find("rows [2, 4) out of range for dataset 'labels' with 3 rows"),
            std::string::npos);

  const fs::path text = path.parent_path() / "not.h5";
  std::ofstream(text) << "plain text";
  EXPECT_NE(error_of([&] { open_file(text.string()); }).find("not a readable HDF5 file"), std::string::npos);
  EXPECT_NE(error_of([&] { open_file((path.parent_path() / "absent.h5").string()); }).find("absent.h5"),
            std::string::npos);
}

// Handles own their ids: a move leaves the source empty, an assignment closes what the target held (HDF5 then
// reports the id invalid), and a handle moved onto itself keeps its id open.
TEST(H5, HandlesCloseWhatTheyHeldWhenAssigned) {
  const std::string path = scratch_file("handles.h5").string();
  Handle file = create_file(path);
  Handle a = create_group(file, "a"), b = create_group(file, "b");
  const hid_t held_by_a = a.id(), held_by_b = b.id();
  a = std::move(b);
  EXPECT_EQ(a.id(), held_by_b);
  EXPECT_EQ(b.id(), H5I_INVALID_HID);
  EXPECT_LE(H5Iis_valid(held_by_a), 0) << "the id the target held was not closed";
  EXPECT_GT(H5Iis_valid(held_by_b), 0);
  Handle& same = a;
  a = std::move(same);
  EXPECT_EQ(a.id(), held_by_b);
  EXPECT_GT(H5Iis_valid(held_by_b), 0) << "a handle moved onto itself closed its id";
  Handle c(std::move(a));
  EXPECT_EQ(c.id(), held_by_b);
  EXPECT_EQ(a.id(), H5I_INVALID_HID);
  c.close();
  EXPECT_EQ(c.id(), H5I_INVALID_HID);
  EXPECT_LE(H5Iis_valid(held_by_b), 0);
}

}  // namespace
}  // namespace ft::h5
