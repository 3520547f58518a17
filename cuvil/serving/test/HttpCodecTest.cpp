//===- HttpCodecTest.cpp - REST body decoding and encoding ----------------===//

#include "cuvil/serving/HttpCodec.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

#include <cstring>

namespace cuvil::serving {
namespace {

TEST(HttpCodecTest, DecodesNestedJsonOfEachDatatype) {
  absl::StatusOr<InferRequest> request = decodeInferRequest(
      R"({"id": "7", "inputs": [
           {"name": "f", "datatype": "FP32", "shape": [2, 2], "data": [[1.5, 2], [3, -4]]},
           {"name": "b", "datatype": "BOOL", "shape": [2], "data": [true, false]},
           {"name": "i", "datatype": "INT8", "shape": [2], "data": [-128, 127]},
           {"name": "u", "datatype": "UINT8", "shape": [1], "data": [255]},
           {"name": "w", "datatype": "UINT16", "shape": [1], "data": [65535]},
           {"name": "v", "datatype": "UINT64", "shape": [1],
            "data": [18446744073709551615]}],
          "outputs": [{"name": "y", "parameters": {"binary_data": true}}]})",
      std::nullopt);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id, "7");
  ASSERT_EQ(request->inputs.size(), 6u);
  EXPECT_EQ(request->inputs[4].data, std::string("\xff\xff", 2));
  EXPECT_EQ(request->inputs[5].data, std::string(8, '\xff'));
  float f[4];
  ASSERT_EQ(request->inputs[0].data.size(), sizeof(f));
  std::memcpy(f, request->inputs[0].data.data(), sizeof(f));
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[3], -4.0f);
  EXPECT_EQ(request->inputs[1].data, std::string("\x01\x00", 2));
  EXPECT_EQ(request->inputs[2].data, std::string("\x80\x7f", 2));
  EXPECT_EQ(request->inputs[3].data, std::string("\xff", 1));
  ASSERT_EQ(request->outputs.size(), 1u);
  EXPECT_TRUE(request->outputs[0].binary);
}

TEST(HttpCodecTest, DecodesBinaryTensors) {
  std::string header =
      R"({"inputs": [{"name": "x", "datatype": "INT32", "shape": [2],
                      "parameters": {"binary_data_size": 8}}]})";
  int32_t values[2] = {-1, 65536};
  std::string body = header + std::string(reinterpret_cast<char *>(values), 8);
  absl::StatusOr<InferRequest> request = decodeInferRequest(body, header.size());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->inputs[0].data, body.substr(header.size()));
}

struct BadCase {
  const char *body;
  const char *message;
};

TEST(HttpCodecTest, RejectsBadRequestsWithReasons) {
  const BadCase cases[] = {
      {"{", "not valid JSON"},
      {R"({"inputs": []})", "non-empty 'inputs'"},
      {R"({"inputs": [{"name": "x", "datatype": "INT8", "shape": [1], "data": [128]}]})",
       "128 is out of range"},
      {R"({"inputs": [{"name": "x", "datatype": "UINT8", "shape": [1], "data": [-1]}]})",
       "-1 is out of range"},
      {R"({"inputs": [{"name": "x", "datatype": "INT32", "shape": [1], "data": [1.5]}]})",
       "integer data holds integers"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [-1], "data": []}]})",
       "must hold non-negative integers"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [4294967296, 4294967296],
          "data": [1]}]})",
       "is too large"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [3], "data": [1, 2]}]})",
       "'data' has 2 elements but shape [3] needs 3"},
      {R"({"inputs": [{"name": "x", "datatype": "BF16", "shape": [1], "data": [1]}]})",
       "BF16 is not supported"},
      {R"({"id": 3, "inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}]})",
       "'id' must be a string"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1], "data": [1]}],
          "parameters": {"binary_data_output": "yes"}})",
       "must be true or false"},
      // A UTF-8 byte order mark: nlohmann would skip it, RFC 8259 forbids it.
      {"\xEF\xBB\xBF{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [1], "
       "\"data\": [1]}]}",
       "starts with a UTF-8 byte order mark"},
      // data is flat, or nested exactly as the shape.
      {R"({"inputs": [{"name": "x", "datatype": "UINT8", "shape": [1], "data": 255}]})",
       "'data' must be an array"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2, 3, 4]]}]})",
       "nested 'data' has 1 entries at level 0 where shape [2, 2] has 2"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2, 3], [4]]}]})",
       "nested 'data' has 3 entries at level 1 where shape [2, 2] has 2"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [4], "data": [[1, 2], [3, 4]]}]})",
       "nested 'data' has 2 entries at level 0 where shape [4] has 4"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 1], "data": [[[1]], [[2]]]}]})",
       "'data' is nested deeper than shape [2, 1]"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [1, [2, 3], 4]}]})",
       "nested 'data' has 3 entries at level 0"},
      {R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2, 2], "data": [[1, 2], 3]}]})",
       "it has a value at level 1"},
  };
  for (const BadCase &bad : cases) {
    absl::StatusOr<InferRequest> request = decodeInferRequest(bad.body, std::nullopt);
    ASSERT_FALSE(request.ok()) << bad.body;
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(request.status().message().find(bad.message), absl::string_view::npos)
        << request.status().message() << " lacks " << bad.message;
  }
}

TEST(HttpCodecTest, DecodingCostIsBoundedFromTheText) {
  auto body = [](const char *tag) {
    return absl::StrCat(R"({"inputs": [{"name": "x", "datatype": "FP32", "shape": [4], )",
                        R"("data": [1, 2, 3, 4], "parameters": {"tag": ")", tag, R"("}}]})");
  };
  // Separators inside strings are not values.
  uint64_t bound = decodeMemoryBound(body("a,b[c{d:e\\\""), std::nullopt);
  EXPECT_EQ(bound, decodeMemoryBound(body("abcdefghi\\\""), std::nullopt));
  EXPECT_GT(bound, 20 * 48);
  // The binary part is copied once.
  std::string header = body("");
  EXPECT_EQ(decodeMemoryBound(header + std::string(100, 'x'), header.size()),
            decodeMemoryBound(header, std::nullopt) + 100);
  // A JSON array of one-digit numbers: a parsed value for every two bytes.
  std::string digits = "[0";
  for (int i = 0; i < 1000; ++i)
    digits += ",0";
  digits += "]";
  EXPECT_GE(decodeMemoryBound(digits, std::nullopt), 1001u * 32);
}

TEST(HttpCodecTest, EncodesJsonAndBinaryOutputs) {
  InferResponse response;
  response.modelName = "m";
  response.modelVersion = "2";
  response.id = "r";
  float values[2] = {0.1f, -3.0f};
  response.outputs.push_back({"y", DataType::kFP32, {1, 2}, std::string(
                                                                reinterpret_cast<char *>(values), 8)});
  response.outputs.push_back({"b", DataType::kBOOL, {1}, std::string("\x01", 1)});
  InferRequest request;
  EncodedResponse json = encodeInferResponse(response, request);
  EXPECT_FALSE(json.jsonLength);
  // 0.1f printed so that it parses back to the same float.
  EXPECT_NE(json.body.find("0.10000000149011612"), std::string::npos) << json.body;
  EXPECT_NE(json.body.find(R"("data":[true])"), std::string::npos) << json.body;
  EXPECT_NE(json.body.find(R"("id":"r")"), std::string::npos);

  request.outputs.push_back({"y", /*binary=*/true});
  EncodedResponse binary = encodeInferResponse(response, request);
  ASSERT_TRUE(binary.jsonLength);
  EXPECT_EQ(binary.body.substr(*binary.jsonLength), std::string(reinterpret_cast<char *>(values), 8));
  EXPECT_NE(binary.body.find(R"("binary_data_size":8)"), std::string::npos);
}

TEST(HttpCodecTest, ErrorBodyEscapes) {
  EXPECT_EQ(errorBody("a \"quoted\" word"), R"({"error":"a \"quoted\" word"})");
}

} // namespace
} // namespace cuvil::serving
