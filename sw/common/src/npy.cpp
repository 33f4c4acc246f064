// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/npy.hpp"

#include "nmsa/file_io.hpp"

#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>

namespace nmsa {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kArrayAlign = 64;
// numpy pads the header so that the first axis can grow to this many digits in place.
constexpr std::size_t kGrowthAxisMaxDigits = 21;
// numpy 1.x's limit on an array's dimensions (NPY_MAXDIMS).
constexpr std::size_t kMaxRank = 32;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw std::runtime_error(name + ": " + what);
}

// A printable rendering of untrusted header text for error messages (bounded, non-ASCII escaped).
std::string quote(const std::string& text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < 80; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (text.size() > 80) out += "...";
  return out + "'";
}

// The header is a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }. This parser accepts exactly the literal forms numpy writes (and the
// harmless variants a Python eval would accept: either quote, any whitespace, a trailing comma,
// Python 2's 'L' suffix) and rejects everything else with a message.
struct HeaderValue {
  enum class Kind { kString, kBool, kTuple } kind = Kind::kString;
  std::string text;
  bool flag = false;
  std::vector<std::int64_t> tuple;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  std::map<std::string, HeaderValue> parse_dict() {
    std::map<std::string, HeaderValue> dict;
    skip_space();
    if (!eat('{')) error("the header is not a Python dict literal: " + quote(s_));
    for (;;) {
      skip_space();
      if (eat('}')) break;
      const std::string key = parse_string("a dict key");
      skip_space();
      if (!eat(':')) error("expected ':' after the key '" + key + "'");
      skip_space();
      HeaderValue value = parse_value(key);
      if (!dict.emplace(key, std::move(value)).second) error("duplicate key '" + key + "'");
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      error("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_space();
    if (pos_ != s_.size()) {
      error("unexpected text after the header dict: " + quote(s_.substr(pos_)));
    }
    return dict;
  }

 private:
  [[noreturn]] void error(const std::string& what) const { fail(name_, "bad header: " + what); }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool eat_word(const char* word) {
    const std::size_t len = std::strlen(word);
    if (s_.compare(pos_, len, word) != 0) return false;
    const std::size_t end = pos_ + len;
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) {
      return false;
    }
    pos_ = end;
    return true;
  }

  std::string parse_string(const char* what) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) {
      error(std::string("expected ") + what + " (a quoted string) at " + quote(s_.substr(pos_)));
    }
    const char q = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') error("escape sequences in header strings are not supported");
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) error(std::string("unterminated string in ") + what);
    ++pos_;
    return out;
  }

  HeaderValue parse_value(const std::string& key) {
    HeaderValue v;
    if (pos_ < s_.size() && (s_[pos_] == '\'' || s_[pos_] == '"')) {
      v.kind = HeaderValue::Kind::kString;
      v.text = parse_string("a string value");
    } else if (eat_word("True")) {
      v.kind = HeaderValue::Kind::kBool;
      v.flag = true;
    } else if (eat_word("False")) {
      v.kind = HeaderValue::Kind::kBool;
      v.flag = false;
    } else if (eat('(')) {
      v.kind = HeaderValue::Kind::kTuple;
      v.tuple = parse_tuple_rest(key);
    } else if (pos_ < s_.size() && s_[pos_] == '[') {
      error("the value of '" + key + "' is a list; structured (record) dtypes are not supported");
    } else {
      error("cannot parse the value of '" + key + "' at " + quote(s_.substr(pos_)));
    }
    return v;
  }

  // After '(': integers separated by commas, an optional trailing comma, ')'.
  std::vector<std::int64_t> parse_tuple_rest(const std::string& key) {
    std::vector<std::int64_t> out;
    for (;;) {
      skip_space();
      if (eat(')')) return out;
      if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        error("the value of '" + key + "' must be a tuple of non-negative integers, found " +
              quote(s_.substr(pos_)));
      }
      std::int64_t n = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        const int digit = s_[pos_++] - '0';
        if (n > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
          error("a dimension in '" + key + "' does not fit in 64 bits");
        }
        n = n * 10 + digit;
      }
      eat('L');  // Python 2 long literal, as old numpy versions wrote them
      out.push_back(n);
      skip_space();
      if (eat(',')) continue;
      if (eat(')')) return out;
      error("expected ',' or ')' in the tuple of '" + key + "'");
    }
  }

  const std::string& s_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

struct DtypeInfo {
  NpyDtype dtype;
  const char* descr;
  std::size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {NpyDtype::kInt8, "|i1", 1},    {NpyDtype::kUint8, "|u1", 1},   {NpyDtype::kInt16, "<i2", 2},
    {NpyDtype::kUint16, "<u2", 2},  {NpyDtype::kInt32, "<i4", 4},   {NpyDtype::kInt64, "<i8", 8},
    {NpyDtype::kFloat32, "<f4", 4}, {NpyDtype::kFloat64, "<f8", 8}, {NpyDtype::kBool, "|b1", 1},
};

NpyDtype parse_descr(const std::string& descr, const std::string& name) {
  for (const auto& d : kDtypes) {
    if (descr == d.descr) return d.dtype;
  }
  // One-byte types have no byte order; numpy writes '|' but accepts '<', '>' and '=' too.
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=')) {
    if (descr.substr(1) == "i1") return NpyDtype::kInt8;
    if (descr.substr(1) == "u1") return NpyDtype::kUint8;
    if (descr.substr(1) == "b1") return NpyDtype::kBool;
  }
  if (!descr.empty() && descr[0] == '>') {
    fail(name, "big-endian dtype " + quote(descr) +
                   " is not supported (save it little-endian, e.g. arr.astype('<" +
                   descr.substr(1) + "'))");
  }
  fail(name, "unsupported dtype " + quote(descr) +
                 " (supported: |i1 int8, |u1 uint8, <i2 int16, <u2 uint16, <i4 int32, <i8 int64, "
                 "<f4 float32, <f8 float64, |b1 bool)");
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

std::uint32_t read_le(const std::uint8_t* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= std::uint32_t{p[i]} << (8 * i);
  return v;
}

// Little-endian element bytes to values and back, independent of the host's byte order.
template <typename T>
using BitsOf = std::conditional_t<
    sizeof(T) == 8, std::uint64_t,
    std::conditional_t<sizeof(T) == 4, std::uint32_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;

template <typename T>
T load_le(const std::uint8_t* p) {
  using Bits = BitsOf<T>;
  Bits bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) bits |= static_cast<Bits>(Bits{p[i]} << (8 * i));
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

template <typename T>
void store_le(T v, std::uint8_t* p) {
  using Bits = BitsOf<T>;
  Bits bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

// The matrix readers take 1-D and 2-D arrays only: a higher rank is an error, never a silent
// flattening.
void require_matrix(const NpyArray& a, const std::string& path) {
  if (a.shape.empty() || a.shape.size() > 2) {
    fail(path, "shape " + shape_text(a.shape) + " has " + std::to_string(a.shape.size()) +
                   " dimensions; a matrix (1-D or 2-D array) is expected here");
  }
}

template <typename T>
Matrix<T> to_matrix(const NpyArray& a) {
  Matrix<T> m(a.rows(), a.cols());
  const std::size_t size = npy_item_size(a.dtype);
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    m.data()[i] = load_le<T>(a.bytes.data() + static_cast<std::size_t>(i) * size);
  }
  return m;
}

template <typename T>
NpyArray from_matrix(const Matrix<T>& m, NpyDtype dtype) {
  NpyArray a;
  a.dtype = dtype;
  a.shape = {static_cast<std::int64_t>(m.rows()), static_cast<std::int64_t>(m.cols())};
  a.bytes.resize(static_cast<std::size_t>(m.size()) * sizeof(T));
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    store_le<T>(m.data()[i], a.bytes.data() + static_cast<std::size_t>(i) * sizeof(T));
  }
  return a;
}


void require_dtype(const NpyArray& a, NpyDtype want, const std::string& path) {
  if (a.dtype != want) {
    fail(path, std::string("expected a ") + npy_dtype_name(want) + " array, the file holds " +
                   npy_dtype_name(a.dtype) + " (" + npy_descr(a.dtype) + ")");
  }
}

}  // namespace

const char* npy_dtype_name(NpyDtype d) {
  switch (d) {
    case NpyDtype::kInt8: return "int8";
    case NpyDtype::kUint8: return "uint8";
    case NpyDtype::kInt16: return "int16";
    case NpyDtype::kUint16: return "uint16";
    case NpyDtype::kInt32: return "int32";
    case NpyDtype::kInt64: return "int64";
    case NpyDtype::kFloat32: return "float32";
    case NpyDtype::kFloat64: return "float64";
    case NpyDtype::kBool: return "bool";
  }
  return "?";
}

const char* npy_descr(NpyDtype dtype) {
  for (const auto& d : kDtypes) {
    if (d.dtype == dtype) return d.descr;
  }
  throw std::invalid_argument("npy: unknown dtype enumerator");
}

std::size_t npy_item_size(NpyDtype dtype) {
  for (const auto& d : kDtypes) {
    if (d.dtype == dtype) return d.size;
  }
  throw std::invalid_argument("npy: unknown dtype enumerator");
}

std::int64_t NpyArray::element_count() const {
  // Checked: a zero dimension makes the count 0 whatever the others hold, and a product beyond
  // int64 (a header from another tool, or a corrupted one) is an error, not a wrapped count.
  for (std::int64_t d : shape) {
    if (d < 0) throw std::runtime_error("npy: negative dimension in shape " + shape_text(shape));
    if (d == 0) return 0;
  }
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (n > std::numeric_limits<std::int64_t>::max() / d) {
      throw std::runtime_error("npy: shape " + shape_text(shape) +
                               " has more elements than a 64-bit count holds");
    }
    n *= d;
  }
  return n;
}

std::int64_t NpyArray::rows() const { return shape.size() == 2 ? shape[0] : 1; }

std::int64_t NpyArray::cols() const {
  return shape.size() == 2 ? shape[1] : (shape.size() == 1 ? shape[0] : 1);
}

NpyArray parse_npy(const std::vector<std::uint8_t>& file, const std::string& name) {
  if (file.size() < kMagicLen || std::memcmp(file.data(), kMagic, kMagicLen) != 0) {
    fail(name, "not a .npy file (it does not start with the magic \\x93NUMPY)");
  }
  if (file.size() < kMagicLen + 2) fail(name, "truncated header: the file ends in the magic");
  const unsigned major = file[6];
  const unsigned minor = file[7];
  std::size_t len_bytes = 0;
  if (major == 1 && minor == 0) {
    len_bytes = 2;
  } else if ((major == 2 || major == 3) && minor == 0) {
    len_bytes = 4;
  } else {
    fail(name, "unsupported .npy format version " + std::to_string(major) + "." +
                   std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  const std::size_t prefix = kMagicLen + 2 + len_bytes;
  if (file.size() < prefix) {
    fail(name, "truncated header: the file ends in the header length field (" +
                   std::to_string(file.size()) + " bytes)");
  }
  const std::size_t header_len = read_le(file.data() + kMagicLen + 2, len_bytes);
  if (file.size() - prefix < header_len) {
    fail(name, "truncated header: the header length field says " + std::to_string(header_len) +
                   " bytes, the file has " + std::to_string(file.size() - prefix) +
                   " after the length field");
  }
  const std::string header(reinterpret_cast<const char*>(file.data() + prefix), header_len);
  const auto dict = HeaderParser(header, name).parse_dict();

  for (const auto& [key, value] : dict) {
    (void)value;
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      fail(name, "bad header: unexpected key '" + key +
                     "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
    }
  }
  const auto field = [&](const char* key, HeaderValue::Kind kind,
                         const char* kind_name) -> const HeaderValue& {
    const auto it = dict.find(key);
    if (it == dict.end()) fail(name, std::string("bad header: the key '") + key + "' is missing");
    if (it->second.kind != kind) {
      fail(name, std::string("bad header: '") + key + "' must be " + kind_name);
    }
    return it->second;
  };
  NpyArray a;
  a.dtype = parse_descr(field("descr", HeaderValue::Kind::kString, "a string").text, name);
  const bool fortran = field("fortran_order", HeaderValue::Kind::kBool, "True or False").flag;
  a.shape = field("shape", HeaderValue::Kind::kTuple, "a tuple").tuple;
  if (a.shape.size() > kMaxRank) {
    fail(name, "shape " + shape_text(a.shape) + " has " + std::to_string(a.shape.size()) +
                   " dimensions; at most " + std::to_string(kMaxRank) + " are supported");
  }

  const std::size_t item = npy_item_size(a.dtype);
  std::uint64_t expected = item;
  for (std::int64_t d : a.shape) {
    const auto dim = static_cast<std::uint64_t>(d);
    if (dim != 0 && expected > std::numeric_limits<std::uint64_t>::max() / dim) {
      fail(name, "shape " + shape_text(a.shape) + " is too large");
    }
    expected *= dim;
  }
  const std::uint64_t available = file.size() - prefix - header_len;
  const std::string declared = "shape " + shape_text(a.shape) + " of " + npy_descr(a.dtype) +
                               " needs " + std::to_string(expected) + " data bytes";
  if (available < expected) {
    fail(name, "truncated data: " + declared + ", the file has " + std::to_string(available));
  }
  if (available > expected) {
    fail(name, "size mismatch: " + declared + ", the file has " + std::to_string(available) +
                   " (" + std::to_string(available - expected) + " extra)");
  }

  const std::uint8_t* data = file.data() + prefix + header_len;
  a.bytes.assign(data, data + expected);
  if (fortran && a.shape.size() >= 2) {
    // Column-major on disk: the first index varies fastest. Walk the elements in C order, keeping
    // the index and its column-major offset in step, and store them row-major.
    const std::size_t rank = a.shape.size();
    std::vector<std::uint64_t> fortran_stride(rank, 1);
    for (std::size_t k = 1; k < rank; ++k) {
      fortran_stride[k] = fortran_stride[k - 1] * static_cast<std::uint64_t>(a.shape[k - 1]);
    }
    std::vector<std::int64_t> index(rank, 0);
    std::uint64_t offset = 0;
    const auto count = static_cast<std::uint64_t>(a.element_count());
    for (std::uint64_t c_pos = 0; c_pos < count; ++c_pos) {
      std::memcpy(a.bytes.data() + c_pos * item, data + offset * item, item);
      for (std::size_t k = rank; k-- > 0;) {  // next C-order index: the last one fastest
        offset += fortran_stride[k];
        if (++index[k] < a.shape[k]) break;
        offset -= fortran_stride[k] * static_cast<std::uint64_t>(a.shape[k]);
        index[k] = 0;
      }
    }
  }
  return a;
}

std::vector<std::uint8_t> serialize_npy(const NpyArray& array) {
  if (array.shape.size() > kMaxRank) {
    throw std::invalid_argument("npy: at most " + std::to_string(kMaxRank) +
                                " dimensions can be written, shape has " +
                                std::to_string(array.shape.size()));
  }
  std::uint64_t count = 1;
  for (std::int64_t d : array.shape) {
    if (d < 0) {
      throw std::invalid_argument("npy: negative dimension in shape " + shape_text(array.shape));
    }
    count *= static_cast<std::uint64_t>(d);
  }
  if (count * npy_item_size(array.dtype) != array.bytes.size()) {
    throw std::invalid_argument("npy: shape " + shape_text(array.shape) + " of " +
                                npy_descr(array.dtype) + " needs " +
                                std::to_string(count * npy_item_size(array.dtype)) +
                                " bytes, the array has " + std::to_string(array.bytes.size()));
  }
  // numpy's _write_array_header: the dict with sorted keys, room for the first axis to grow (none
  // for a scalar), then spaces and '\n' up to a multiple of 64 bytes (a full 64 when already
  // aligned).
  std::string header = std::string("{'descr': '") + npy_descr(array.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_text(array.shape) + ", }";
  if (!array.shape.empty()) {
    header.append(kGrowthAxisMaxDigits - std::to_string(array.shape[0]).size(), ' ');
  }
  const std::size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  header.append(kArrayAlign - unpadded % kArrayAlign, ' ');
  header += '\n';
  if (header.size() > 0xffff) throw std::invalid_argument("npy: header too long for format 1.0");

  // Sized once and filled with memcpy (GCC 12 warns falsely about vector::insert after reserve).
  const std::size_t prefix = kMagicLen + 4;
  std::vector<std::uint8_t> out(prefix + header.size() + array.bytes.size());
  std::memcpy(out.data(), kMagic, kMagicLen);
  out[6] = 1;
  out[7] = 0;
  out[8] = static_cast<std::uint8_t>(header.size() & 0xff);
  out[9] = static_cast<std::uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (!array.bytes.empty()) {
    std::memcpy(out.data() + prefix + header.size(), array.bytes.data(), array.bytes.size());
  }
  return out;
}

NpyArray read_npy(const std::string& path) {
  const std::string bytes = read_regular_file(path);
  return parse_npy(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), path);
}

void write_npy(const std::string& path, const NpyArray& array) {
  const std::vector<std::uint8_t> bytes = serialize_npy(array);
  write_file_atomically(path, std::string(bytes.begin(), bytes.end()));
}

MatrixF read_npy_matrix_f(const std::string& path) {
  const NpyArray a = read_npy(path);
  require_matrix(a, path);
  if (a.dtype == NpyDtype::kFloat32) return to_matrix<float>(a);
  if (a.dtype == NpyDtype::kFloat64) return to_matrix<double>(a).cast<float>();
  fail(path, std::string("expected a float32 or float64 array, the file holds ") +
                 npy_dtype_name(a.dtype) + " (" + npy_descr(a.dtype) + ")");
}

MatrixI8 read_npy_matrix_i8(const std::string& path) {
  const NpyArray a = read_npy(path);
  require_matrix(a, path);
  require_dtype(a, NpyDtype::kInt8, path);
  return to_matrix<std::int8_t>(a);
}

MatrixI32 read_npy_matrix_i32(const std::string& path) {
  const NpyArray a = read_npy(path);
  require_matrix(a, path);
  require_dtype(a, NpyDtype::kInt32, path);
  return to_matrix<std::int32_t>(a);
}

Matrix<std::uint8_t> read_npy_matrix_u8(const std::string& path) {
  const NpyArray a = read_npy(path);
  require_matrix(a, path);
  require_dtype(a, NpyDtype::kUint8, path);
  return to_matrix<std::uint8_t>(a);
}

NpyArray to_npy_array(const MatrixI8& m) { return from_matrix(m, NpyDtype::kInt8); }
NpyArray to_npy_array(const MatrixF& m) { return from_matrix(m, NpyDtype::kFloat32); }
NpyArray to_npy_array(const MatrixI32& m) { return from_matrix(m, NpyDtype::kInt32); }
NpyArray to_npy_array(const Matrix<std::uint8_t>& m) { return from_matrix(m, NpyDtype::kUint8); }

void write_npy(const std::string& path, const MatrixI8& m) { write_npy(path, to_npy_array(m)); }
void write_npy(const std::string& path, const MatrixF& m) { write_npy(path, to_npy_array(m)); }
void write_npy(const std::string& path, const MatrixI32& m) { write_npy(path, to_npy_array(m)); }
void write_npy(const std::string& path, const Matrix<std::uint8_t>& m) {
  write_npy(path, to_npy_array(m));
}

}  // namespace nmsa
