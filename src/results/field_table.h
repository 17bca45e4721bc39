// One declaration per results field: its name, meaning and the struct member it maps to. The results
// file writer and reader, the rank gather and the field listing for the Python tools all walk these.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace ft {

// Where one field of a record lives; the alternative's index is the field's FieldType.
using FieldRef = std::variant<int*, bool*, std::int64_t*, double*, std::string*>;
enum class FieldType { int32, boolean, int64, float64, text };

template <typename Record>
struct Field {
  const char* name;
  const char* meaning;
  FieldRef (*ref)(Record&);

  FieldType type() const {
    Record probe{};
    return static_cast<FieldType>(ref(probe).index());
  }
};

// A field stored under the member's own name, or under `name` for members such as array elements.
#define FT_FIELD(Record, member, meaning) \
  ::ft::Field<Record> { #member, meaning, [](Record& r) -> ::ft::FieldRef { return &r.member; } }
#define FT_FIELD_AS(Record, name, expr, meaning) \
  ::ft::Field<Record> { name, meaning, [](Record& r) -> ::ft::FieldRef { return &r.expr; } }

// A dataset of many values for one record (a matrix, per-image outputs): declared with its stored element
// type and its shape in words, and written by the code that owns the record.
struct ArrayField {
  const char* name;
  const char* stored;  // "int64", "float32", ...
  const char* shape;   // e.g. "[K,K]" (K classes)
  const char* meaning;
};

struct ArrayGroup {
  const char* path;
  std::vector<ArrayField> fields;
  // The declaration of `name`; throws ft::Error (a writer and its table disagree) when there is none.
  const ArrayField& field(const std::string& name) const;
};

// How a group of fields is stored: attributes of one HDF5 object, one dataset per field (a table, one
// element per record), or one single-string dataset per field.
enum class FieldLayout { attributes, columns, text_datasets };

template <typename Record>
struct FieldGroup {
  const char* path;  // "/" for the file itself, else the group, e.g. "/epochs"
  FieldLayout layout;
  std::vector<Field<Record>> fields;
};

// The HDF5 element type a field is stored as: tables keep int and bool as int32, attributes widen
// every integer to int64 (what h5py, h5dump and pandas show).
inline const char* stored_type(FieldType type, FieldLayout layout) {
  switch (type) {
    case FieldType::int32:
    case FieldType::boolean: return layout == FieldLayout::columns ? "int32" : "int64";
    case FieldType::int64: return "int64";
    case FieldType::float64: return "float64";
    case FieldType::text: return "string";
  }
  return "?";
}

}  // namespace ft
