// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ONNX model input: an .onnx file (a ModelProto) or a TensorProto .pb file (the inputs and outputs
// of the ONNX backend tests) read into a small representation that nmsa owns. Only
// sw/graph/src/onnx_model.cpp sees protobuf and libonnx's generated classes; the runtime, the CLI
// and the tests work on Graph and Tensor. What is kept is what the runtime needs: nodes (op type,
// inputs, outputs, attributes), initializers, the graph's inputs and outputs, the opset.
//
// Every loader error is a std::runtime_error whose message starts with the file (or the source
// name given) and says what is wrong with it: unreadable, not a protobuf of the expected kind,
// no graph, a tensor whose data does not match its shape, an element type or feature (external
// data, string tensors) that nmsa does not support.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nmsa {

// Element types the runtime computes with. ONNX's other types (double, float16, strings, ...) are
// rejected by the loader with a message naming them.
enum class ElementType { FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, BOOL };

std::string_view to_string(ElementType t);  // "float", "uint8", ...
bool is_integer(ElementType t);             // every type but FLOAT
// Wraps an integer into the range of an integer type as a two's-complement cast does (numpy's
// uint8 + uint8 wraps the same way); BOOL becomes 0 or 1. Throws for FLOAT.
std::int64_t wrap_to(ElementType t, std::int64_t v);

// A dense row-major host tensor. FLOAT values live in `floats`; every integer type (and BOOL) in
// `ints` as int64 values inside the type's range, so that integer kernels compute exactly and
// wrap explicitly. A scalar has an empty shape and one element.
struct Tensor {
  ElementType type = ElementType::FLOAT;
  std::vector<std::int64_t> shape;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;

  std::int64_t size() const;  // number of elements: the product of `shape` (1 for a scalar)
  int rank() const { return static_cast<int>(shape.size()); }
  bool is_float() const { return type == ElementType::FLOAT; }
  std::string describe() const;  // "float[3x4]", "uint8[] (scalar)"
  // Throws std::runtime_error starting with `what` unless the storage matches the shape and the
  // type (negative dimension, wrong element count, integer out of the type's range).
  void validate(const std::string& what) const;

  static Tensor make_float(std::vector<std::int64_t> shape, std::vector<float> values);
  static Tensor make_int(ElementType type, std::vector<std::int64_t> shape,
                         std::vector<std::int64_t> values);
  static Tensor zeros(ElementType type, std::vector<std::int64_t> shape);
};

struct Attribute {
  enum class Kind { INT, FLOAT, STRING, INTS, FLOATS, STRINGS, TENSOR, UNSUPPORTED };
  Kind kind = Kind::UNSUPPORTED;
  std::int64_t i = 0;
  float f = 0.0f;
  std::string s;
  std::vector<std::int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::optional<Tensor> tensor;  // Kind::TENSOR
};

struct Node {
  std::string name;  // the model's node name, or "<op_type>_<index>" when it has none
  std::string op_type;
  std::string domain;                // "" (or "ai.onnx") is the default ONNX domain
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an unused optional output
  std::map<std::string, Attribute> attributes;

  // "Gemm node 'fc1'", for messages.
  std::string describe() const;
  // The i-th input, or "" when the node has fewer inputs (an omitted optional input).
  const std::string& input(std::size_t i) const;
  bool has_attribute(const std::string& name) const { return attributes.count(name) != 0; }
  // Typed look-ups: a missing attribute gives `fallback` (or an empty vector / nullptr); one of
  // another kind throws std::runtime_error naming the node and the attribute.
  std::int64_t attr_int(const std::string& name, std::int64_t fallback) const;
  float attr_float(const std::string& name, float fallback) const;
  std::vector<std::int64_t> attr_ints(const std::string& name) const;
  const Tensor* attr_tensor(const std::string& name) const;
};

// A graph input or output as the model declares it.
struct ValueInfo {
  std::string name;
  std::optional<ElementType> type;  // empty when undeclared; an unsupported one fails the load
  std::optional<std::vector<std::int64_t>> shape;  // -1 for a symbolic or unknown dimension
};

struct Graph {
  std::string name;
  std::string source;      // the file the graph was read from, for messages
  std::int64_t opset = 0;  // version of the default ONNX domain; 0 when the model names none
  std::vector<Node> nodes;
  std::map<std::string, Tensor> initializers;
  std::vector<ValueInfo> inputs;  // the runtime inputs (inputs with an initializer excluded)
  std::vector<ValueInfo> outputs;

  bool is_constant(const std::string& value) const { return initializers.count(value) != 0; }
  // Turns the runtime input `name` into an initializer holding `value`: a weight that an exporter
  // (or an ONNX backend test) passes as an input becomes a constant the runtime can place on the
  // device. Throws std::invalid_argument if `name` is not a runtime input or `value` is malformed.
  void freeze_input(const std::string& name, Tensor value);
};

// A TensorProto read from a .pb file, with the name it carries (may be empty).
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Reads an .onnx file. Throws std::runtime_error naming the file when it cannot be read, is not an
// ONNX ModelProto, has no graph, or holds a tensor or attribute nmsa cannot represent.
Graph load_onnx_model(const std::string& path);
// The same from the bytes of a serialized ModelProto; `source` names them in messages.
Graph parse_onnx_model(const std::string& bytes, const std::string& source);

// Reads a serialized TensorProto (.pb file). Throws std::runtime_error naming the file on a
// read error, a parse error, or data that does not match the declared type and shape.
NamedTensor load_onnx_tensor(const std::string& path);
NamedTensor parse_onnx_tensor(const std::string& bytes, const std::string& source);

}  // namespace nmsa
