// Protocol Buffers wire-format encoders (varints, keys, fixed-width and length-delimited fields), written
// by hand for the event files: see proto_wire.h for why there is no protobuf library.
#include "monitor/proto_wire.h"

#include <cstring>

namespace ft::proto {

void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_key(std::string& out, int field, Wire wire) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire));
}

void put_int64(std::string& out, int field, std::int64_t value) {
  put_key(out, field, Wire::varint);
  put_varint(out, static_cast<std::uint64_t>(value));
}

void put_le32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void put_le64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void put_double(std::string& out, int field, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, field, Wire::fixed64);
  put_le64(out, bits);
}

void put_float(std::string& out, int field, float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  put_key(out, field, Wire::fixed32);
  put_le32(out, bits);
}

void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, Wire::bytes);
  put_varint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

}  // namespace ft::proto
