// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/onnx_model.hpp"

#include "nmsa/file_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

// Debian's libonnx-dev ships only the ONNX_ML flavour of the generated classes (onnx-ml.pb.h);
// its CMake targets define ONNX_ML and ONNX_NAMESPACE=onnx for us.
#include <onnx/onnx_pb.h>

namespace nmsa {

namespace {

// A limit far above any tensor the device can take, but low enough that a corrupt shape cannot
// make the loader try to allocate terabytes.
constexpr std::int64_t MAX_ELEMENTS = std::int64_t{1} << 34;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw std::runtime_error(source + ": " + what);
}

// The newest ai.onnx opset of the ONNX library nmsa builds with (Debian 12's ONNX 1.13).
constexpr std::int64_t kMaxOpset = 18;

std::optional<ElementType> element_type(int onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT:
      return ElementType::FLOAT;
    case onnx::TensorProto::UINT8:
      return ElementType::UINT8;
    case onnx::TensorProto::INT8:
      return ElementType::INT8;
    case onnx::TensorProto::UINT16:
      return ElementType::UINT16;
    case onnx::TensorProto::INT16:
      return ElementType::INT16;
    case onnx::TensorProto::INT32:
      return ElementType::INT32;
    case onnx::TensorProto::INT64:
      return ElementType::INT64;
    case onnx::TensorProto::BOOL:
      return ElementType::BOOL;
    default:
      return std::nullopt;
  }
}

std::string onnx_type_name(int onnx_type) {
  if (onnx::TensorProto::DataType_IsValid(onnx_type)) {
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnx_type));
  }
  return "unknown type " + std::to_string(onnx_type);
}

std::size_t element_bytes(ElementType t) {
  switch (t) {
    case ElementType::FLOAT:
    case ElementType::INT32:
      return 4;
    case ElementType::UINT8:
    case ElementType::INT8:
    case ElementType::BOOL:
      return 1;
    case ElementType::UINT16:
    case ElementType::INT16:
      return 2;
    case ElementType::INT64:
      return 8;
  }
  return 1;
}

// Little-endian raw_data, whatever the host's byte order.
std::uint64_t load_le(const std::string& raw, std::size_t at, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) {
    v = (v << 8) | static_cast<std::uint8_t>(raw[at + i]);
  }
  return v;
}

std::int64_t sign_extend(std::uint64_t v, std::size_t bytes) {
  if (bytes == 8) return static_cast<std::int64_t>(v);
  const std::uint64_t sign = std::uint64_t{1} << (8 * bytes - 1);
  return static_cast<std::int64_t>((v ^ sign) - sign);
}

Tensor convert_tensor(const onnx::TensorProto& t, const std::string& what) {
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
    fail(what, "external tensor data is not supported (save the model with its data inside)");
  }
  if (t.has_segment()) fail(what, "segmented tensors are not supported");
  const std::optional<ElementType> type = element_type(t.data_type());
  if (!type) {
    fail(what, "element type " + onnx_type_name(t.data_type()) +
                   " is not supported (float, int8/16/32/64, uint8/16 and bool are)");
  }
  Tensor out;
  out.type = *type;
  std::int64_t count = 1;
  for (const std::int64_t d : t.dims()) {
    if (d < 0) fail(what, "negative dimension " + std::to_string(d));
    if (d != 0 && count > MAX_ELEMENTS / d) fail(what, "shape has too many elements");
    count *= d;
    out.shape.push_back(d);
  }
  const auto n = static_cast<std::size_t>(count);
  auto mismatch = [&](std::size_t got, const char* field) {
    fail(what, "shape " + out.describe() + " needs " + std::to_string(n) + " elements, " + field +
                   " holds " + std::to_string(got));
  };

  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const std::size_t eb = element_bytes(*type);
    if (raw.size() != n * eb) mismatch(raw.size() / eb, "raw_data");
    if (*type == ElementType::FLOAT) {
      out.floats.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto bits = static_cast<std::uint32_t>(load_le(raw, i * 4, 4));
        std::memcpy(&out.floats[i], &bits, 4);
      }
    } else {
      out.ints.resize(n);
      const bool is_signed = *type == ElementType::INT8 || *type == ElementType::INT16 ||
                             *type == ElementType::INT32 || *type == ElementType::INT64;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t v = load_le(raw, i * eb, eb);
        out.ints[i] = is_signed ? sign_extend(v, eb) : static_cast<std::int64_t>(v);
      }
    }
  } else if (*type == ElementType::FLOAT) {
    if (static_cast<std::size_t>(t.float_data_size()) != n) {
      mismatch(static_cast<std::size_t>(t.float_data_size()), "float_data");
    }
    out.floats.assign(t.float_data().begin(), t.float_data().end());
  } else if (*type == ElementType::INT64) {
    if (static_cast<std::size_t>(t.int64_data_size()) != n) {
      mismatch(static_cast<std::size_t>(t.int64_data_size()), "int64_data");
    }
    out.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else {
    // int32_data carries every narrower integer type and bool (onnx.proto).
    if (static_cast<std::size_t>(t.int32_data_size()) != n) {
      mismatch(static_cast<std::size_t>(t.int32_data_size()), "int32_data");
    }
    out.ints.assign(t.int32_data().begin(), t.int32_data().end());
  }
  out.validate(what);
  return out;
}

std::string tensor_label(const std::string& source, const std::string& kind,
                         const std::string& name) {
  return source + ": " + kind + (name.empty() ? std::string() : " '" + name + "'");
}

Attribute convert_attribute(const onnx::AttributeProto& a, const std::string& what) {
  Attribute out;
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      out.kind = Attribute::Kind::INT;
      out.i = a.i();
      break;
    case onnx::AttributeProto::FLOAT:
      out.kind = Attribute::Kind::FLOAT;
      out.f = a.f();
      break;
    case onnx::AttributeProto::STRING:
      out.kind = Attribute::Kind::STRING;
      out.s = a.s();
      break;
    case onnx::AttributeProto::INTS:
      out.kind = Attribute::Kind::INTS;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      out.kind = Attribute::Kind::FLOATS;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      out.kind = Attribute::Kind::STRINGS;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::TENSOR:
      out.kind = Attribute::Kind::TENSOR;
      out.tensor = convert_tensor(a.t(), what + " attribute '" + a.name() + "'");
      break;
    default:
      // Graphs, sparse tensors, type protos: kept as UNSUPPORTED; only the operators that use
      // them (If, Loop, ...) would need them, and the runtime has no kernel for those.
      out.kind = Attribute::Kind::UNSUPPORTED;
      break;
  }
  return out;
}

// A graph input or output. One declared with an element type nmsa cannot represent (bfloat16,
// float16, double, strings, ...) is an error: a tensor fed to it would be misread.
ValueInfo convert_value_info(const onnx::ValueInfoProto& v, const std::string& source,
                             const char* what) {
  ValueInfo out;
  out.name = v.name();
  if (v.has_type() && v.type().has_tensor_type()) {
    const auto& tt = v.type().tensor_type();
    if (tt.has_elem_type() && tt.elem_type() != onnx::TensorProto::UNDEFINED) {
      out.type = element_type(tt.elem_type());
      if (!out.type) {
        fail(source, std::string(what) + " '" + v.name() + "' is " +
                         onnx_type_name(tt.elem_type()) + ", an element type nmsa does not support");
      }
    }
    if (tt.has_shape()) {
      std::vector<std::int64_t> shape;
      for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() < 0) {
          fail(source, std::string(what) + " '" + v.name() + "' has dimension " +
                           std::to_string(d.dim_value()) + "; dimensions are >= 0 or symbolic");
        }
        shape.push_back(d.has_dim_value() ? d.dim_value() : -1);  // -1: symbolic or unknown
      }
      out.shape = std::move(shape);
    }
  }
  return out;
}

const char* kind_name(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::INT:
      return "int";
    case Attribute::Kind::FLOAT:
      return "float";
    case Attribute::Kind::STRING:
      return "string";
    case Attribute::Kind::INTS:
      return "ints";
    case Attribute::Kind::FLOATS:
      return "floats";
    case Attribute::Kind::STRINGS:
      return "strings";
    case Attribute::Kind::TENSOR:
      return "tensor";
    case Attribute::Kind::UNSUPPORTED:
      return "unsupported kind";
  }
  return "?";
}

}  // namespace

// --- ElementType and Tensor -------------------------------------------------------------------

std::string_view to_string(ElementType t) {
  switch (t) {
    case ElementType::FLOAT:
      return "float";
    case ElementType::UINT8:
      return "uint8";
    case ElementType::INT8:
      return "int8";
    case ElementType::UINT16:
      return "uint16";
    case ElementType::INT16:
      return "int16";
    case ElementType::INT32:
      return "int32";
    case ElementType::INT64:
      return "int64";
    case ElementType::BOOL:
      return "bool";
  }
  return "?";
}

bool is_integer(ElementType t) { return t != ElementType::FLOAT; }

std::int64_t wrap_to(ElementType t, std::int64_t v) {
  switch (t) {
    case ElementType::UINT8:
      return static_cast<std::uint8_t>(v);
    case ElementType::INT8:
      return static_cast<std::int8_t>(v);
    case ElementType::UINT16:
      return static_cast<std::uint16_t>(v);
    case ElementType::INT16:
      return static_cast<std::int16_t>(v);
    case ElementType::INT32:
      return static_cast<std::int32_t>(v);
    case ElementType::INT64:
      return v;
    case ElementType::BOOL:
      return v != 0 ? 1 : 0;
    case ElementType::FLOAT:
      break;
  }
  throw std::invalid_argument("wrap_to: float is not an integer type");
}

std::int64_t Tensor::size() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

std::string Tensor::describe() const {
  std::string s(to_string(type));
  s += '[';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += 'x';
    s += std::to_string(shape[i]);
  }
  s += ']';
  if (shape.empty()) s += " (scalar)";
  return s;
}

void Tensor::validate(const std::string& what) const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0) fail(what, "negative dimension in shape " + describe());
    if (d != 0 && n > MAX_ELEMENTS / d) fail(what, "shape " + describe() + " is too large");
    n *= d;
  }
  const std::size_t want = static_cast<std::size_t>(n);
  const std::size_t have = is_float() ? floats.size() : ints.size();
  const std::size_t other = is_float() ? ints.size() : floats.size();
  if (have != want || other != 0) {
    fail(what, "shape " + describe() + " needs " + std::to_string(want) +
                   " elements, the tensor holds " + std::to_string(have));
  }
  if (!is_float()) {
    for (std::size_t i = 0; i < ints.size(); ++i) {
      if (wrap_to(type, ints[i]) != ints[i]) {
        fail(what, "element " + std::to_string(i) + " = " + std::to_string(ints[i]) +
                       " is outside the range of " + std::string(to_string(type)));
      }
    }
  }
}

Tensor Tensor::make_float(std::vector<std::int64_t> shape, std::vector<float> values) {
  Tensor t;
  t.type = ElementType::FLOAT;
  t.shape = std::move(shape);
  t.floats = std::move(values);
  t.validate("Tensor::make_float");
  return t;
}

Tensor Tensor::make_int(ElementType type, std::vector<std::int64_t> shape,
                        std::vector<std::int64_t> values) {
  if (type == ElementType::FLOAT) {
    throw std::invalid_argument("Tensor::make_int: float is not an integer type");
  }
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.ints = std::move(values);
  t.validate("Tensor::make_int");
  return t;
}

Tensor Tensor::zeros(ElementType type, std::vector<std::int64_t> shape) {
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  const std::int64_t n = t.size();
  if (n < 0) throw std::invalid_argument("Tensor::zeros: negative dimension");
  if (type == ElementType::FLOAT) {
    t.floats.assign(static_cast<std::size_t>(n), 0.0f);
  } else {
    t.ints.assign(static_cast<std::size_t>(n), 0);
  }
  return t;
}

// --- Node and Graph ---------------------------------------------------------------------------

std::string Node::describe() const { return op_type + " node '" + name + "'"; }

const std::string& Node::input(std::size_t i) const {
  static const std::string none;
  return i < inputs.size() ? inputs[i] : none;
}

std::int64_t Node::attr_int(const std::string& name, std::int64_t fallback) const {
  const auto it = attributes.find(name);
  if (it == attributes.end()) return fallback;
  if (it->second.kind != Attribute::Kind::INT) {
    throw std::runtime_error(describe() + ": attribute '" + name + "' is " +
                             kind_name(it->second.kind) + ", expected int");
  }
  return it->second.i;
}

float Node::attr_float(const std::string& name, float fallback) const {
  const auto it = attributes.find(name);
  if (it == attributes.end()) return fallback;
  if (it->second.kind != Attribute::Kind::FLOAT) {
    throw std::runtime_error(describe() + ": attribute '" + name + "' is " +
                             kind_name(it->second.kind) + ", expected float");
  }
  return it->second.f;
}

std::vector<std::int64_t> Node::attr_ints(const std::string& name) const {
  const auto it = attributes.find(name);
  if (it == attributes.end()) return {};
  if (it->second.kind != Attribute::Kind::INTS) {
    throw std::runtime_error(describe() + ": attribute '" + name + "' is " +
                             kind_name(it->second.kind) + ", expected ints");
  }
  return it->second.ints;
}

const Tensor* Node::attr_tensor(const std::string& name) const {
  const auto it = attributes.find(name);
  if (it == attributes.end()) return nullptr;
  if (it->second.kind != Attribute::Kind::TENSOR || !it->second.tensor) {
    throw std::runtime_error(describe() + ": attribute '" + name + "' is " +
                             kind_name(it->second.kind) + ", expected tensor");
  }
  return &*it->second.tensor;
}

void Graph::freeze_input(const std::string& name, Tensor value) {
  auto it = inputs.begin();
  while (it != inputs.end() && it->name != name) ++it;
  if (it == inputs.end()) {
    throw std::invalid_argument((source.empty() ? std::string("graph") : source) + ": '" + name +
                                "' is not a runtime input of the graph");
  }
  try {
    value.validate("value for input '" + name + "'");
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  initializers[name] = std::move(value);
  inputs.erase(it);
}

// --- Loading ----------------------------------------------------------------------------------

Graph parse_onnx_model(const std::string& bytes, const std::string& source) {
  if (bytes.empty()) fail(source, "empty file, not an ONNX model");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    fail(source,
         "not an ONNX model (the protobuf ModelProto does not parse; corrupt or truncated)");
  }
  if (!model.has_graph()) {
    fail(source, "not an ONNX model (no graph; the bytes may be some other protobuf)");
  }
  const onnx::GraphProto& g = model.graph();
  Graph out;
  out.name = g.name();
  out.source = source;
  // The IR version and the default domain's opset must be ones the ONNX library nmsa is built
  // with knows (Debian 12: IR 8, opset 18): a model from a newer exporter is refused, naming
  // the range, rather than run with semantics this loader may not have.
  if (model.ir_version() < 3 || model.ir_version() > onnx::IR_VERSION) {
    fail(source, "IR version " + std::to_string(model.ir_version()) +
                     " is not supported (supported: 3 to " + std::to_string(onnx::IR_VERSION) +
                     ")");
  }
  bool has_default_opset = false;
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      out.opset = op.version();
      has_default_opset = true;
    }
  }
  const bool uses_default_domain =
      std::any_of(g.node().begin(), g.node().end(), [](const onnx::NodeProto& n) {
        return n.domain().empty() || n.domain() == "ai.onnx";
      });
  if (!has_default_opset && uses_default_domain) {
    fail(source, "no opset_import for the default ONNX domain, which its nodes use");
  }
  if (has_default_opset && (out.opset < 1 || out.opset > kMaxOpset)) {
    fail(source, "opset " + std::to_string(out.opset) + " of the default domain is not supported " +
                     "(supported: 1 to " + std::to_string(kMaxOpset) + ")");
  }
  if (g.node_size() == 0 && g.output_size() == 0)
    fail(source, "the graph has no nodes and no outputs");

  for (const auto& init : g.initializer()) {
    if (init.name().empty()) fail(source, "an initializer has no name");
    if (out.initializers.count(init.name()) != 0) {
      fail(source, "two initializers are named '" + init.name() + "'");
    }
    Tensor value = convert_tensor(init, tensor_label(source, "initializer", init.name()));
    for (std::size_t i = 0; i < value.floats.size(); ++i) {
      if (!std::isfinite(value.floats[i])) {
        fail(source, "initializer '" + init.name() + "' holds " + std::to_string(value.floats[i]) +
                         " at element " + std::to_string(i) + ": weights must be finite");
      }
    }
    out.initializers.emplace(init.name(), std::move(value));
  }
  if (g.sparse_initializer_size() != 0) fail(source, "sparse initializers are not supported");

  std::set<std::string> seen_inputs;
  for (const auto& in : g.input()) {
    if (in.name().empty()) fail(source, "a graph input has no name");
    if (!seen_inputs.insert(in.name()).second) {
      fail(source, "two graph inputs are named '" + in.name() + "'");
    }
    // Before IR version 4 every initializer was also listed as an input; it stays a constant.
    if (out.initializers.count(in.name()) == 0) {
      out.inputs.push_back(convert_value_info(in, source, "graph input"));
    }
  }
  for (const auto& o : g.output()) {
    if (o.name().empty()) fail(source, "a graph output has no name");
    out.outputs.push_back(convert_value_info(o, source, "graph output"));
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& np = g.node(i);
    Node n;
    n.op_type = np.op_type();
    if (n.op_type.empty()) fail(source, "node " + std::to_string(i) + " has no op_type");
    n.name = np.name().empty() ? n.op_type + "_" + std::to_string(i) : np.name();
    n.domain = np.domain() == "ai.onnx" ? std::string() : np.domain();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    const std::string what = source + ": " + n.describe();
    for (const auto& a : np.attribute()) {
      if (a.name().empty()) fail(source, n.describe() + " has an attribute without a name");
      n.attributes[a.name()] = convert_attribute(a, what);
    }
    out.nodes.push_back(std::move(n));
  }
  return out;
}

Graph load_onnx_model(const std::string& path) { return parse_onnx_model(read_regular_file(path), path); }

NamedTensor parse_onnx_tensor(const std::string& bytes, const std::string& source) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes)) {
    fail(source, "not an ONNX TensorProto (the protobuf does not parse; corrupt or truncated)");
  }
  if (!t.has_data_type()) fail(source, "not an ONNX TensorProto (no data type)");
  NamedTensor out;
  out.name = t.name();
  out.tensor = convert_tensor(t, source);
  return out;
}

NamedTensor load_onnx_tensor(const std::string& path) {
  return parse_onnx_tensor(read_regular_file(path), path);
}

}  // namespace nmsa
