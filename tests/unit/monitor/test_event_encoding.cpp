// The TensorBoard event-file encoders against independent references: CRC-32C check values (RFC 3720), varints
// from the protobuf encoding guide, and whole records and Event messages as TensorBoard's own Python
// package serialises them (event_pb2 and its RecordWriter; the bytes were printed by it and pasted here).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "monitor/proto_wire.h"
#include "monitor/tensorboard_events.h"
#include "monitor/tf_record.h"

namespace ft {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string varint(std::uint64_t value) {
  std::string out;
  proto::put_varint(out, value);
  return out;
}

TEST(EventEncoding, Crc32cMatchesPublishedCheckValues) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);      // RFC 3720 B.4: 32 bytes of zeros
  EXPECT_EQ(crc32c(std::string(32, '\xFF')), 0x62A8AB43u);    // 32 bytes of ones
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);                   // 0x00, 0x01, ..., 0x1F
}

TEST(EventEncoding, MaskedCrcAsTensorBoardComputesIt) {
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);  // tensorboard's tensorflow_stub masked_crc32c
}

TEST(EventEncoding, VarintsAsTheProtobufEncodingGuideGivesThem) {
  EXPECT_EQ(varint(0), bytes({0x00}));
  EXPECT_EQ(varint(1), bytes({0x01}));
  EXPECT_EQ(varint(127), bytes({0x7F}));
  EXPECT_EQ(varint(128), bytes({0x80, 0x01}));
  EXPECT_EQ(varint(150), bytes({0x96, 0x01}));
  EXPECT_EQ(varint(300), bytes({0xAC, 0x02}));
  EXPECT_EQ(varint(UINT64_MAX), bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
  std::string negative;
  proto::put_int64(negative, 2, -1);  // key 0x10, then ten bytes: int64 -1 as protobuf writes it
  EXPECT_EQ(negative, bytes({0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST(EventEncoding, RecordsFramedAsTensorBoardsRecordWriter) {
  EXPECT_EQ(tf_record("abc"), bytes({0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xb0, 0x99, 0x49, 0x0e, 0x61,
                                     0x62, 0x63, 0x6e, 0x57, 0xf1, 0x21}));
  EXPECT_EQ(tf_record(""), bytes({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x29, 0x03, 0x98, 0x07, 0xd8, 0xea,
                                  0x82, 0xa2}));
}

TEST(EventEncoding, ScalarEventAsEventPb2SerialisesIt) {
  const std::string expected =
      bytes({0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f, 0x10, 0x07, 0x2a, 0x1e, 0x0a, 0x11, 0x0a, 0x0a,
             0x74, 0x72, 0x61, 0x69, 0x6e, 0x2f, 0x6c, 0x6f, 0x73, 0x73, 0x15, 0x00, 0x00, 0x80, 0x3e, 0x0a, 0x09,
             0x0a, 0x02, 0x6c, 0x72, 0x15, 0x00, 0x00, 0x00, 0xc0});
  EXPECT_EQ(scalars_event(1.5, 7, {{"train/loss", 0.25}, {"lr", -2.0}}), expected);
}

TEST(EventEncoding, SessionStartAndFileVersionAsEventPb2SerialisesThem) {
  EXPECT_EQ(session_start_event(2.0, 300), bytes({0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x10, 0xac,
                                                  0x02, 0x3a, 0x02, 0x08, 0x01}));
  EXPECT_EQ(file_version_event(0.0), bytes({0x1a, 0x0d, 0x62, 0x72, 0x61, 0x69, 0x6e, 0x2e, 0x45, 0x76, 0x65, 0x6e,
                                            0x74, 0x3a, 0x32}));
}

TEST(EventEncoding, TextEventAsTheTextPluginWritesIt) {
  const std::string expected =
      bytes({0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x40, 0x10, 0x05, 0x2a, 0x24, 0x0a, 0x22, 0x0a, 0x06,
             0x63, 0x6f, 0x6e, 0x66, 0x69, 0x67, 0x42, 0x0c, 0x08, 0x07, 0x12, 0x04, 0x12, 0x02, 0x08, 0x01, 0x42,
             0x02, 0x68, 0x69, 0x4a, 0x0a, 0x0a, 0x06, 0x0a, 0x04, 0x74, 0x65, 0x78, 0x74, 0x20, 0x02});
  EXPECT_EQ(text_event(3.0, 5, "config", "hi"), expected);
}

}  // namespace
}  // namespace ft
