// `fusetrain inspect FILE [OBJECT...]`: the contents of any HDF5 file (shards, results) with the
// project's own reader, so hosts without hdf5-tools can look inside: a tree, or the values of objects.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

#include "app/command_line.h"
#include "app/commands.h"
#include "app/error_text.h"
#include "config/number_text.h"
#include "io/h5.h"
#include "io/paths.h"
#include "runtime/error_report.h"

namespace po = boost::program_options;

namespace ft {
namespace {

bool is_string(hid_t type) { return H5Tget_class(type) == H5T_STRING; }

// Every attribute of `object`, as "  @name = value" lines.
void print_attributes(hid_t object, const std::string& indent);

std::string attribute_text(hid_t object, const std::string& name) {
  const h5::Handle attr(FT_CHECK_H5(H5Aopen(object, name.c_str(), H5P_DEFAULT)));
  const h5::Handle type(FT_CHECK_H5(H5Aget_type(attr)));
  if (is_string(type)) {
    const h5::Handle space(FT_CHECK_H5(H5Aget_space(attr)));
    if (FT_CHECK_H5(H5Sget_simple_extent_npoints(space)) == 1 && !H5Tis_variable_str(type))
      return h5::attr_string(object, name);
    std::string out;
    for (const auto& s : h5::attr_strings(object, name)) out += (out.empty() ? "" : ", ") + s;
    return out;
  }
  std::string out;
  // Shortest exact text: a value read here compares exactly with what was written.
  for (double v : h5::attr_doubles(object, name)) out += cat(out.empty() ? "" : ", ", shortest_number(v));
  return out;
}

void print_attributes(hid_t object, const std::string& indent) {
  H5O_info_t info{};
  FT_CHECK_H5(H5Oget_info2(object, &info, H5O_INFO_NUM_ATTRS));
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    char name[256];
    FT_CHECK_H5(H5Aget_name_by_idx(object, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT));
    std::printf("%s@%s = %s\n", indent.c_str(), name, attribute_text(object, name).c_str());
  }
}

std::string shape_text(hid_t parent, const std::string& name) {
  std::string out;
  for (hsize_t d : h5::dims(parent, name)) out += cat(out.empty() ? "" : ", ", d);
  return "[" + out + "]";
}

// Visits the objects under a group; `prefix` (the group's path with a trailing '/') goes before each name.
herr_t print_object(hid_t root, const char* name, const H5O_info_t* info, void* prefix_data) {
  const std::string& prefix = *static_cast<const std::string*>(prefix_data);
  if (std::string(name) == ".") {
    if (prefix == "/") return print_attributes(root, "/  "), 0;
    std::printf("%s\n", prefix.c_str());
    print_attributes(root, "  ");
    return 0;
  }
  const h5::Handle object(FT_CHECK_H5(H5Oopen(root, name, H5P_DEFAULT)));
  if (info->type == H5O_TYPE_DATASET)
    std::printf("%s%s %s\n", prefix.c_str(), name, shape_text(root, name).c_str());
  else
    std::printf("%s%s/\n", prefix.c_str(), name);
  print_attributes(object, "  ");
  return 0;
}

// A group and everything under it, as the whole file's tree lists them.
void print_tree(hid_t group, const std::string& path) {
  std::string prefix = path == "/" ? "/" : path + "/";
  FT_CHECK_H5(H5Ovisit2(group, H5_INDEX_NAME, H5_ITER_INC, print_object, &prefix, H5O_INFO_BASIC));
}

bool is_group(hid_t file, const std::string& path) {
  const h5::Handle object(FT_CHECK_H5(H5Oopen(file, path.c_str(), H5P_DEFAULT)));
  return H5Iget_type(object) == H5I_GROUP;
}

// The values of one dataset (one per line) or of one attribute ("/group/name" where name is an
// attribute of /group).
void print_values(hid_t file, const std::string& path) {
  if (path == "/" || (h5::exists(file, path) && is_group(file, path))) {
    const h5::Handle group(FT_CHECK_H5(H5Oopen(file, path.c_str(), H5P_DEFAULT)));
    return print_tree(group, path);
  }
  if (h5::exists(file, path)) {
    const h5::Handle dataset(FT_CHECK_H5(H5Dopen2(file, path.c_str(), H5P_DEFAULT)));
    const h5::Handle type(FT_CHECK_H5(H5Dget_type(dataset)));
    if (is_string(type)) {
      for (const auto& s : h5::read_strings(file, path)) std::printf("%s\n", s.c_str());
    } else {
      for (double v : h5::read_all<double>(file, path)) std::printf("%.17g\n", v);
    }
    return;
  }
  const std::string parent = paths::parent(path).empty() ? "/" : paths::parent(path);
  const std::string name = paths::filename(path);
  FT_REQUIRE(parent == "/" || h5::exists(file, parent), "no object ", path);
  const h5::Handle object(FT_CHECK_H5(H5Oopen(file, parent.c_str(), H5P_DEFAULT)));
  FT_REQUIRE(h5::has_attr(object, name), "no dataset or attribute ", path);
  std::printf("%s\n", attribute_text(object, name).c_str());
}

}  // namespace

int inspect_command(int argc, char** argv) {
  po::options_description options("fusetrain inspect: show an HDF5 file (a data shard or a results file)\n\n"
                                  "usage: fusetrain inspect FILE [OBJECT ...]\n"
                                  "  without OBJECT: every group, dataset (with its shape) and attribute\n"
                                  "  OBJECT /epochs/test_acc: a dataset's values, one per line\n"
                                  "  OBJECT /epochs: a group's tree, as without OBJECT\n"
                                  "  OBJECT /summary/final_test_acc: an attribute's value\n\noptions");
  options.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(options).add_options()("file", po::value<std::string>())("object", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("file", 1).add("object", -1);
  po::variables_map vm;
  if (!parse_command_line(all, argc, argv, vm, "fusetrain inspect", &positional)) return 2;
  if (vm.count("help") || !vm.count("file")) return std::cout << options, vm.count("help") ? 0 : 2;
  const std::string path = vm["file"].as<std::string>();
  try {
    const h5::Handle file = h5::open_file(path);
    if (!vm.count("object")) {
      print_tree(file, "/");
      return 0;
    }
    for (const auto& object : vm["object"].as<std::vector<std::string>>()) print_values(file, object);
  } catch (const std::exception& e) {
    print_failure("fusetrain inspect", path + ": " + error_text(e));
    return 1;
  }
  return 0;
}

}  // namespace ft
