// Protocol Buffers wire format, the few pieces TensorBoard's event messages need: varints, field keys,
// length-delimited fields and little-endian fixed-width numbers, appended to a byte string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Written by hand rather than generated: fusetrain has no protobuf library among its dependencies, and the
// event files need five small messages (tensorboard_events.h) of which only these encodings are used.
namespace ft::proto {

enum class Wire : std::uint8_t { varint = 0, fixed64 = 1, bytes = 2, fixed32 = 5 };

// Base-128 varint, least significant group first, high bit set on every byte but the last.
void put_varint(std::string& out, std::uint64_t value);
// A field's key: (field number << 3) | wire type, as a varint.
void put_key(std::string& out, int field, Wire wire);
// int64/enum/bool field (varint; a negative int64 takes ten bytes, as protobuf writes it).
void put_int64(std::string& out, int field, std::int64_t value);
// double (fixed64) and float (fixed32) fields, little-endian IEEE 754.
void put_double(std::string& out, int field, double value);
void put_float(std::string& out, int field, float value);
// string, bytes and embedded-message fields: the length as a varint, then the bytes.
void put_bytes(std::string& out, int field, std::string_view bytes);

// Little-endian fixed-width integers, for the TFRecord framing.
void put_le32(std::string& out, std::uint32_t value);
void put_le64(std::string& out, std::uint64_t value);

}  // namespace ft::proto
