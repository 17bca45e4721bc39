// Implementation of the HDF5 layer: native type mapping, variable-length strings, chunked gzip datasets
// and hyperslab reads. HDF5's own error printing is silenced; its stack is folded into our messages.
#include "io/h5.h"

#include <mutex>
#include <vector>

namespace ft::h5 {
namespace {

herr_t collect_error(unsigned, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (err->desc && *err->desc) out->push_back(err->desc);
  return 0;
}

// The outermost description (what failed) and the innermost (why), e.g. "unable to open file
// (truncated file: eof = 2048, sblock->base_addr = 0, stored_eof = 53248)".
std::string error_stack() {
  std::vector<std::string> descriptions;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &descriptions);
  H5Eclear2(H5E_DEFAULT);
  if (descriptions.empty()) return "unknown HDF5 error";
  if (descriptions.size() == 1) return descriptions.front();
  return descriptions.front() + " (" + descriptions.back() + ")";
}

void silence_library() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

template <typename T>
hid_t native();
template <> hid_t native<std::uint8_t>() { return H5T_NATIVE_UINT8; }
template <> hid_t native<std::int32_t>() { return H5T_NATIVE_INT32; }
template <> hid_t native<std::int64_t>() { return H5T_NATIVE_INT64; }
template <> hid_t native<float>() { return H5T_NATIVE_FLOAT; }
template <> hid_t native<double>() { return H5T_NATIVE_DOUBLE; }

Handle vlen_string_type() {
  Handle type(FT_CHECK_H5(H5Tcopy(H5T_C_S1)));
  FT_CHECK_H5(H5Tset_size(type, H5T_VARIABLE));
  FT_CHECK_H5(H5Tset_cset(type, H5T_CSET_UTF8));
  return type;
}

std::vector<const char*> c_strings(const std::vector<std::string>& values) {
  std::vector<const char*> out;
  out.reserve(values.size());
  for (const auto& v : values) out.push_back(v.c_str());
  return out;
}

std::vector<std::string> read_vlen_strings(hid_t obj, bool is_attr, hssize_t count) {
  if (count == 0) return {};  // an empty table column: nothing to read (HDF5 rejects a null buffer)
  Handle type = vlen_string_type();
  std::vector<char*> raw(static_cast<std::size_t>(count), nullptr);
  if (is_attr)
    FT_CHECK_H5(H5Aread(obj, type, raw.data()));
  else
    FT_CHECK_H5(H5Dread(obj, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()));
  std::vector<std::string> out;
  for (char* s : raw) out.emplace_back(s ? s : "");
  Handle space(FT_CHECK_H5(is_attr ? H5Aget_space(obj) : H5Dget_space(obj)));
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, raw.data());
  return out;
}

Handle make_attr(hid_t obj, const std::string& name, hid_t type, hid_t space) {
  if (H5Aexists(obj, name.c_str()) > 0) FT_CHECK_H5(H5Adelete(obj, name.c_str()));
  return Handle(FT_CHECK_H5(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)));
}

Handle open_attr(hid_t obj, const std::string& name) {
  FT_REQUIRE(H5Aexists(obj, name.c_str()) > 0, "missing HDF5 attribute '", name, "'");
  return Handle(FT_CHECK_H5(H5Aopen(obj, name.c_str(), H5P_DEFAULT)));
}

hssize_t element_count(hid_t space) { return FT_CHECK_H5(H5Sget_simple_extent_npoints(space)); }

}  // namespace

template <typename T>
T check(T value, const char* call, const char* file, int line) {
  if (value < 0) throw_error(file, line, cat("HDF5 call failed: ", call, ": ", error_stack()));
  return value;
}
template hid_t check<hid_t>(hid_t, const char*, const char*, int);
template herr_t check<herr_t>(herr_t, const char*, const char*, int);
template hssize_t check<hssize_t>(hssize_t, const char*, const char*, int);

namespace {
herr_t close_id(hid_t id) {
  switch (H5Iget_type(id)) {
    case H5I_FILE: return H5Fclose(id);
    case H5I_GROUP: return H5Gclose(id);
    case H5I_DATASET: return H5Dclose(id);
    case H5I_DATASPACE: return H5Sclose(id);
    case H5I_DATATYPE: return H5Tclose(id);
    case H5I_ATTR: return H5Aclose(id);
    case H5I_GENPROP_LST: return H5Pclose(id);
    default: return 0;
  }
}
}  // namespace

Handle::~Handle() {
  if (id_ >= 0) close_id(id_);
}

void Handle::close() {
  if (id_ < 0) return;
  const hid_t id = id_;
  id_ = H5I_INVALID_HID;
  FT_REQUIRE(close_id(id) >= 0, "HDF5 could not flush and close its file: ", error_stack(),
             " (is the file system full?)");
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    Handle dying(id_);
    id_ = other.id_;
    other.id_ = H5I_INVALID_HID;
  }
  return *this;
}

Handle create_file(const std::string& path) {
  silence_library();
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  FT_REQUIRE(id >= 0, "cannot create HDF5 file ", path, ": ", error_stack());
  return Handle(id);
}

Handle create_memory_file(const std::string& name) {
  silence_library();
  Handle access(FT_CHECK_H5(H5Pcreate(H5P_FILE_ACCESS)));
  FT_CHECK_H5(H5Pset_fapl_core(access, 1 << 20, /*backing_store=*/0));
  return Handle(FT_CHECK_H5(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access)));
}

std::string file_image(hid_t file) {
  FT_CHECK_H5(H5Fflush(file, H5F_SCOPE_GLOBAL));
  const ssize_t size = H5Fget_file_image(file, nullptr, 0);
  FT_CHECK(size > 0, "HDF5 call failed: H5Fget_file_image: ", error_stack());
  std::string image(static_cast<std::size_t>(size), '\0');
  FT_CHECK(H5Fget_file_image(file, image.data(), image.size()) == size, "HDF5 call failed: H5Fget_file_image: ",
           error_stack());
  return image;
}

Handle open_file(const std::string& path, bool writable) {
  silence_library();
  FT_REQUIRE(H5Fis_hdf5(path.c_str()) > 0, "cannot open ", path,
             ": not a readable HDF5 file (missing, truncated or corrupt)");
  const hid_t id = H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  FT_REQUIRE(id >= 0, "cannot open HDF5 file ", path, ": ", error_stack());
  return Handle(id);
}

Handle create_group(hid_t parent, const std::string& name) {
  return Handle(FT_CHECK_H5(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
}

Handle open_group(hid_t parent, const std::string& name) {
  FT_REQUIRE(exists(parent, name), "missing HDF5 group '", name, "'");
  return Handle(FT_CHECK_H5(H5Gopen2(parent, name.c_str(), H5P_DEFAULT)));
}

bool exists(hid_t parent, const std::string& path) {
  return H5Lexists(parent, path.c_str(), H5P_DEFAULT) > 0;
}

template <typename T>
void write(hid_t parent, const std::string& name, const T* data, const std::vector<hsize_t>& dims,
           const std::vector<hsize_t>& chunk) {
  Handle space(FT_CHECK_H5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr)));
  Handle props(FT_CHECK_H5(H5Pcreate(H5P_DATASET_CREATE)));
  if (!chunk.empty()) {
    FT_CHECK_H5(H5Pset_chunk(props, static_cast<int>(chunk.size()), chunk.data()));
    FT_CHECK_H5(H5Pset_deflate(props, 1));
  }
  Handle set(FT_CHECK_H5(
      H5Dcreate2(parent, name.c_str(), native<T>(), space, H5P_DEFAULT, props, H5P_DEFAULT)));
  if (element_count(space) > 0)
    FT_CHECK_H5(H5Dwrite(set, native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
}

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values) {
  const hsize_t n = values.size();
  Handle space(FT_CHECK_H5(H5Screate_simple(1, &n, nullptr)));
  Handle type = vlen_string_type();
  Handle set(FT_CHECK_H5(
      H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  auto raw = c_strings(values);
  if (n) FT_CHECK_H5(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()));
}

std::vector<hsize_t> dims(hid_t parent, const std::string& name) {
  FT_REQUIRE(exists(parent, name), "missing HDF5 dataset '", name, "'");
  Handle set(FT_CHECK_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT)));
  Handle space(FT_CHECK_H5(H5Dget_space(set)));
  const int rank = FT_CHECK_H5(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> out(static_cast<std::size_t>(rank));
  FT_CHECK_H5(H5Sget_simple_extent_dims(space, out.data(), nullptr));
  return out;
}

std::pair<H5T_class_t, std::size_t> element_type(hid_t parent, const std::string& name) {
  Handle set(FT_CHECK_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT)));
  Handle type(FT_CHECK_H5(H5Dget_type(set)));
  return {H5Tget_class(type), H5Tget_size(type)};
}

template <typename T>
void read_rows(hid_t parent, const std::string& name, hsize_t first, hsize_t count, T* out) {
  FT_REQUIRE(exists(parent, name), "missing HDF5 dataset '", name, "'");
  Handle set(FT_CHECK_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT)));
  Handle space(FT_CHECK_H5(H5Dget_space(set)));
  const int rank = FT_CHECK_H5(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> extent(static_cast<std::size_t>(rank));
  FT_CHECK_H5(H5Sget_simple_extent_dims(space, extent.data(), nullptr));
  FT_REQUIRE(rank >= 1 && first + count <= extent[0], "rows [", first, ", ", first + count,
             ") out of range for dataset '", name, "' with ", rank >= 1 ? extent[0] : 0, " rows");
  if (count == 0) return;
  std::vector<hsize_t> start(extent.size(), 0), size = extent;
  start[0] = first;
  size[0] = count;
  FT_CHECK_H5(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, size.data(), nullptr));
  Handle memory(FT_CHECK_H5(H5Screate_simple(rank, size.data(), nullptr)));
  FT_CHECK_H5(H5Dread(set, native<T>(), memory, space, H5P_DEFAULT, out));
}

template <typename T>
std::vector<T> read_all(hid_t parent, const std::string& name) {
  const auto extent = dims(parent, name);
  hsize_t total = 1;
  for (auto d : extent) total *= d;
  std::vector<T> out(total);
  if (!extent.empty()) read_rows(parent, name, 0, extent[0], out.data());
  else if (total) {
    Handle set(FT_CHECK_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT)));
    FT_CHECK_H5(H5Dread(set, native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()));
  }
  return out;
}

std::vector<std::string> read_strings(hid_t parent, const std::string& name) {
  FT_REQUIRE(exists(parent, name), "missing HDF5 dataset '", name, "'");
  Handle set(FT_CHECK_H5(H5Dopen2(parent, name.c_str(), H5P_DEFAULT)));
  Handle space(FT_CHECK_H5(H5Dget_space(set)));
  return read_vlen_strings(set, false, element_count(space));
}

#define FT_INSTANTIATE(T)                                                                        \
  template void write<T>(hid_t, const std::string&, const T*, const std::vector<hsize_t>&,       \
                         const std::vector<hsize_t>&);                                           \
  template void read_rows<T>(hid_t, const std::string&, hsize_t, hsize_t, T*);                   \
  template std::vector<T> read_all<T>(hid_t, const std::string&);
FT_INSTANTIATE(std::uint8_t)
FT_INSTANTIATE(std::int32_t)
FT_INSTANTIATE(std::int64_t)
FT_INSTANTIATE(float)
FT_INSTANTIATE(double)
#undef FT_INSTANTIATE

void set_attr(hid_t obj, const std::string& name, const std::string& value) {
  Handle type = vlen_string_type();
  Handle space(FT_CHECK_H5(H5Screate(H5S_SCALAR)));
  Handle attr = make_attr(obj, name, type, space);
  const char* raw = value.c_str();
  FT_CHECK_H5(H5Awrite(attr, type, &raw));
}

void set_attr(hid_t obj, const std::string& name, const char* value) {
  set_attr(obj, name, std::string(value));
}

void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  Handle type = vlen_string_type();
  const hsize_t n = values.size();
  Handle space(FT_CHECK_H5(H5Screate_simple(1, &n, nullptr)));
  Handle attr = make_attr(obj, name, type, space);
  auto raw = c_strings(values);
  if (n) FT_CHECK_H5(H5Awrite(attr, type, raw.data()));
}

void set_attr(hid_t obj, const std::string& name, std::int64_t value) {
  Handle space(FT_CHECK_H5(H5Screate(H5S_SCALAR)));
  Handle attr = make_attr(obj, name, H5T_NATIVE_INT64, space);
  FT_CHECK_H5(H5Awrite(attr, H5T_NATIVE_INT64, &value));
}

void set_attr(hid_t obj, const std::string& name, double value) {
  Handle space(FT_CHECK_H5(H5Screate(H5S_SCALAR)));
  Handle attr = make_attr(obj, name, H5T_NATIVE_DOUBLE, space);
  FT_CHECK_H5(H5Awrite(attr, H5T_NATIVE_DOUBLE, &value));
}

void set_attr(hid_t obj, const std::string& name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  Handle space(FT_CHECK_H5(H5Screate_simple(1, &n, nullptr)));
  Handle attr = make_attr(obj, name, H5T_NATIVE_DOUBLE, space);
  if (n) FT_CHECK_H5(H5Awrite(attr, H5T_NATIVE_DOUBLE, values.data()));
}

bool has_attr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string attr_string(hid_t obj, const std::string& name) {
  Handle attr = open_attr(obj, name);
  Handle type(FT_CHECK_H5(H5Aget_type(attr)));
  FT_REQUIRE(H5Tget_class(type) == H5T_STRING, "HDF5 attribute '", name, "' is not a string");
  Handle space(FT_CHECK_H5(H5Aget_space(attr)));
  auto values = read_vlen_strings(attr, true, element_count(space));
  return values.empty() ? std::string() : values.front();
}

std::vector<std::string> attr_strings(hid_t obj, const std::string& name) {
  Handle attr = open_attr(obj, name);
  Handle space(FT_CHECK_H5(H5Aget_space(attr)));
  return read_vlen_strings(attr, true, element_count(space));
}

std::int64_t attr_int(hid_t obj, const std::string& name) {
  Handle attr = open_attr(obj, name);
  Handle space(FT_CHECK_H5(H5Aget_space(attr)));
  FT_REQUIRE(element_count(space) == 1, "HDF5 attribute '", name, "' is not a scalar");
  std::int64_t value = 0;
  FT_CHECK_H5(H5Aread(attr, H5T_NATIVE_INT64, &value));
  return value;
}

double attr_double(hid_t obj, const std::string& name) {
  Handle attr = open_attr(obj, name);
  Handle space(FT_CHECK_H5(H5Aget_space(attr)));
  FT_REQUIRE(element_count(space) == 1, "HDF5 attribute '", name, "' is not a scalar");
  double value = 0;
  FT_CHECK_H5(H5Aread(attr, H5T_NATIVE_DOUBLE, &value));
  return value;
}

std::vector<double> attr_doubles(hid_t obj, const std::string& name) {
  Handle attr = open_attr(obj, name);
  Handle space(FT_CHECK_H5(H5Aget_space(attr)));
  std::vector<double> out(static_cast<std::size_t>(element_count(space)));
  if (!out.empty()) FT_CHECK_H5(H5Aread(attr, H5T_NATIVE_DOUBLE, out.data()));
  return out;
}

}  // namespace ft::h5
