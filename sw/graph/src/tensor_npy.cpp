// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tensor_npy.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace nmsa {
namespace {

NpyDtype dtype_of(ElementType t) {
  switch (t) {
    case ElementType::FLOAT: return NpyDtype::kFloat32;
    case ElementType::UINT8: return NpyDtype::kUint8;
    case ElementType::INT8: return NpyDtype::kInt8;
    case ElementType::UINT16: return NpyDtype::kUint16;
    case ElementType::INT16: return NpyDtype::kInt16;
    case ElementType::INT32: return NpyDtype::kInt32;
    case ElementType::INT64: return NpyDtype::kInt64;
    case ElementType::BOOL: return NpyDtype::kBool;
  }
  throw std::invalid_argument("npy_from_tensor: unknown element type");
}

ElementType element_type_of(NpyDtype d) {
  switch (d) {
    case NpyDtype::kUint8: return ElementType::UINT8;
    case NpyDtype::kInt8: return ElementType::INT8;
    case NpyDtype::kUint16: return ElementType::UINT16;
    case NpyDtype::kInt16: return ElementType::INT16;
    case NpyDtype::kInt32: return ElementType::INT32;
    case NpyDtype::kInt64: return ElementType::INT64;
    case NpyDtype::kBool: return ElementType::BOOL;
    case NpyDtype::kFloat32:
    case NpyDtype::kFloat64: return ElementType::FLOAT;
  }
  return ElementType::FLOAT;
}

// Element i of `size` bytes, little-endian as .npy files hold them ('<' in the header), whatever
// the host's byte order.
std::uint64_t load_bits(const NpyArray& a, std::size_t i, std::size_t size) {
  std::uint64_t bits = 0;
  for (std::size_t b = 0; b < size; ++b) bits |= std::uint64_t{a.bytes[i * size + b]} << (8 * b);
  return bits;
}

void store_bits(NpyArray& a, std::size_t i, std::size_t size, std::uint64_t bits) {
  for (std::size_t b = 0; b < size; ++b) {
    a.bytes[i * size + b] = static_cast<std::uint8_t>(bits >> (8 * b));
  }
}

// Element i of an integer or bool array, sign- or zero-extended.
std::int64_t load_int(const NpyArray& a, std::size_t i) {
  const std::size_t size = npy_item_size(a.dtype);
  std::uint64_t bits = load_bits(a, i, size);
  const bool is_signed = a.dtype == NpyDtype::kInt8 || a.dtype == NpyDtype::kInt16 ||
                         a.dtype == NpyDtype::kInt32 || a.dtype == NpyDtype::kInt64;
  if (is_signed && size < 8 && (bits >> (8 * size - 1)) != 0) {
    bits |= ~std::uint64_t{0} << (8 * size);
  }
  return static_cast<std::int64_t>(bits);
}

}  // namespace

Tensor tensor_from_npy(const NpyArray& array, std::optional<ElementType> declared,
                       const std::string& what) {
  const ElementType want = declared ? *declared : element_type_of(array.dtype);
  const auto count = static_cast<std::size_t>(array.element_count());
  if (want == ElementType::FLOAT) {
    std::vector<float> values(count);
    if (array.dtype == NpyDtype::kFloat32) {
      for (std::size_t i = 0; i < count; ++i) {
        const auto bits = static_cast<std::uint32_t>(load_bits(array, i, 4));
        std::memcpy(&values[i], &bits, 4);
      }
    } else if (array.dtype == NpyDtype::kFloat64) {
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t bits = load_bits(array, i, 8);
        double d = 0;
        std::memcpy(&d, &bits, 8);
        values[i] = static_cast<float>(d);
      }
    } else {
      throw std::runtime_error(what + ": the model takes float here, the file holds " +
                               npy_dtype_name(array.dtype) + " (float32 or float64 expected)");
    }
    return Tensor::make_float(array.shape, std::move(values));
  }
  if (array.dtype != dtype_of(want)) {
    throw std::runtime_error(what + ": the model takes " + std::string(to_string(want)) +
                             " here, the file holds " + npy_dtype_name(array.dtype));
  }
  std::vector<std::int64_t> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = load_int(array, i);
  return Tensor::make_int(want, array.shape, std::move(values));
}

NpyArray npy_from_tensor(const Tensor& tensor) {
  NpyArray a;
  a.dtype = dtype_of(tensor.type);
  a.shape = tensor.shape;
  const std::size_t size = npy_item_size(a.dtype);
  const auto count = static_cast<std::size_t>(tensor.size());
  a.bytes.resize(count * size);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    if (tensor.is_float()) {
      std::uint32_t f = 0;
      std::memcpy(&f, &tensor.floats[i], 4);
      bits = f;
    } else {
      bits = static_cast<std::uint64_t>(tensor.ints[i]);
    }
    store_bits(a, i, size, bits);
  }
  return a;
}

}  // namespace nmsa
