// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// NumPy .npy files (the format numpy.save writes: magic, version, a Python-literal header, raw
// data), the way weights and activations exported from PyTorch/NumPy reach the host library
// without Python.
//
// Read: format versions 1.0, 2.0 and 3.0 (3.0 differs from 2.0 only in allowing UTF-8 in the
// header, which none of the supported dtypes needs); dtypes int8 (|i1), uint8 (|u1), int16 (<i2),
// uint16 (<u2), int32 (<i4), int64 (<i8), float32 (<f4), float64 (<f8) and bool (|b1); any rank
// up to 32, a scalar (shape ()) included. fortran_order True is accepted and the data are
// reordered into C order on reading, so NpyArray::bytes is always C order (numpy writes Fortran
// order for the transpose of a C array, e.g. np.save("w.npy", w.T)). The matrix readers below
// take 1-D and 2-D arrays only.
// Written: format 1.0, C order, byte for byte what numpy.save writes for the same array (checked
// against numpy 2.4; recent numpy pads the header with room for the first axis to grow in place,
// and so does this writer).
//
// Every malformed file gives a std::runtime_error whose message starts with the path (or the name
// given to parse_npy) and says what is wrong; nothing else escapes, and nothing is read out of
// bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmsa/types.hpp"

namespace nmsa {

enum class NpyDtype { kInt8, kUint8, kInt16, kUint16, kInt32, kInt64, kFloat32, kFloat64, kBool };

// The descr numpy writes for the dtype ("|i1", "<i4", "<f4", "|b1", ...) and its size in bytes.
const char* npy_descr(NpyDtype dtype);
const char* npy_dtype_name(NpyDtype dtype);  // numpy's name: "int8", "uint8", "int32", ...
std::size_t npy_item_size(NpyDtype dtype);

// An array as stored in a .npy file: the dtype, the shape (empty for a scalar) and the raw
// little-endian element bytes in C (row-major) order.
struct NpyArray {
  NpyDtype dtype = NpyDtype::kFloat32;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;

  // The product of shape: 0 when a dimension is 0; std::runtime_error on a negative dimension or
  // a product beyond int64.
  std::int64_t element_count() const;
  // The array as a matrix: [rows x cols] for 2-D, [1 x n] for 1-D.
  std::int64_t rows() const;
  std::int64_t cols() const;
};

// Decodes the bytes of a whole .npy file; `name` (usually the path) prefixes every error message.
NpyArray parse_npy(const std::vector<std::uint8_t>& file, const std::string& name);

// Encodes as format 1.0. Throws std::invalid_argument unless the shape has at most 32
// non-negative dimensions whose product matches the number of bytes.
std::vector<std::uint8_t> serialize_npy(const NpyArray& array);

// File wrappers: std::runtime_error naming the path on any I/O error.
NpyArray read_npy(const std::string& path);
void write_npy(const std::string& path, const NpyArray& array);

// Typed readers: the array as a row-major matrix ([1 x n] for a 1-D array). Throw
// std::runtime_error naming the path if the file's dtype is not the one asked for. float64 is
// converted to the nearest float32 (magnitudes beyond float range become +-infinity); no other
// conversion is made, so that an INT8 tensor is never silently produced from floats.
MatrixF read_npy_matrix_f(const std::string& path);             // float32 or float64
MatrixI8 read_npy_matrix_i8(const std::string& path);           // int8
MatrixI32 read_npy_matrix_i32(const std::string& path);         // int32
Matrix<std::uint8_t> read_npy_matrix_u8(const std::string& path);  // uint8

// Typed writers: a 2-D array of the matrix's shape.
void write_npy(const std::string& path, const MatrixI8& m);
void write_npy(const std::string& path, const MatrixF& m);
void write_npy(const std::string& path, const MatrixI32& m);
void write_npy(const std::string& path, const Matrix<std::uint8_t>& m);

// The NpyArray of a matrix (2-D, C order), as the writers store it.
NpyArray to_npy_array(const MatrixI8& m);
NpyArray to_npy_array(const MatrixF& m);
NpyArray to_npy_array(const MatrixI32& m);
NpyArray to_npy_array(const Matrix<std::uint8_t>& m);

}  // namespace nmsa
