// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// .npy read/write: round trips, byte equality with what numpy.save writes (the expected bytes are
// built here by hand, no Python involved), and a clear error for every kind of malformed file.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../common/random_matrix.hpp"
#include "nmsa/file_io.hpp"
#include "nmsa/npy.hpp"

namespace nmsa {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Paths in the test temporary directory, named after the test; removed when the test ends.
class TempFiles {
 public:
  TempFiles() = default;
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  ~TempFiles() {
    for (const std::string& p : paths_) std::remove(p.c_str());
  }
  std::string operator()(const std::string& name) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    paths_.push_back(::testing::TempDir() + "nmsa_npy_" + info->name() + "_" + name);
    return paths_.back();
  }

 private:
  std::vector<std::string> paths_;
};

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

// What numpy.save writes: magic, version 1.0, little-endian header length, the dict, spaces so
// that the first axis can grow to 21 digits, then spaces and '\n' up to a 64-byte boundary.
Bytes numpy_file(const std::string& dict, const std::string& first_dim, const Bytes& data) {
  std::string header = dict + std::string(21 - first_dim.size(), ' ');
  const std::size_t unpadded = 10 + header.size() + 1;
  header += std::string(64 - unpadded % 64, ' ') + "\n";
  Bytes out = bytes_of(std::string("\x93NUMPY\x01\x00", 8));
  out.push_back(static_cast<std::uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  append(out, bytes_of(header));
  append(out, data);
  return out;
}

// A version 1.0 or 2.0 file around an arbitrary header text (no padding rules applied).
Bytes raw_file(const std::string& header, const Bytes& data, int major = 1) {
  Bytes out = bytes_of(std::string("\x93NUMPY", 6));
  out.push_back(static_cast<std::uint8_t>(major));
  out.push_back(0);
  const std::size_t len = header.size();
  out.push_back(static_cast<std::uint8_t>(len & 0xff));
  out.push_back(static_cast<std::uint8_t>((len >> 8) & 0xff));
  if (major >= 2) {
    out.push_back(static_cast<std::uint8_t>((len >> 16) & 0xff));
    out.push_back(static_cast<std::uint8_t>(len >> 24));
  }
  append(out, bytes_of(header));
  append(out, data);
  return out;
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

Bytes le_floats(const std::vector<float>& v) {
  Bytes out;
  for (float f : v) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
  return out;
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  TempFiles temp;
  // np.save(p, np.arange(12, dtype=np.float32).reshape(3, 4)): a 128-byte header, spelled out in
  // full once so that the test does not only restate the writer's own padding rule.
  MatrixF f(3, 4);
  for (int i = 0; i < 12; ++i) f.data()[i] = static_cast<float>(i);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  std::string literal = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict;
  literal += std::string(128 - 1 - literal.size(), ' ') + "\n";
  ASSERT_EQ(literal.size(), 128u);
  Bytes want = bytes_of(literal);
  append(want, le_floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(serialize_npy(to_npy_array(f)), want);
  EXPECT_EQ(numpy_file(dict, "3", le_floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})), want);

  const std::string path = temp("f.npy");
  write_npy(path, f);
  EXPECT_EQ(read_file(path), want);

  // int8, uint8 and int32, including a first axis long enough to change the padding.
  MatrixI8 i8(2, 3);
  i8 << -128, -1, 0, 1, 2, 127;
  EXPECT_EQ(serialize_npy(to_npy_array(i8)),
            numpy_file("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }", "2",
                       Bytes{0x80, 0xff, 0x00, 0x01, 0x02, 0x7f}));
  Matrix<std::uint8_t> u8(1, 2);
  u8 << 0, 255;
  EXPECT_EQ(serialize_npy(to_npy_array(u8)),
            numpy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2), }", "1",
                       Bytes{0x00, 0xff}));
  MatrixI32 i32(1, 2);
  i32 << -2, 0x01020304;
  EXPECT_EQ(serialize_npy(to_npy_array(i32)),
            numpy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }", "1",
                       Bytes{0xfe, 0xff, 0xff, 0xff, 0x04, 0x03, 0x02, 0x01}));
  const MatrixI8 tall = MatrixI8::Zero(12345, 1);
  Bytes zeros(12345, 0);
  EXPECT_EQ(serialize_npy(to_npy_array(tall)),
            numpy_file("{'descr': '|i1', 'fortran_order': False, 'shape': (12345, 1), }", "12345",
                       zeros));
  // A 1-D array: shape (5,).
  NpyArray vec;
  vec.dtype = NpyDtype::kInt8;
  vec.shape = {5};
  vec.bytes = {1, 2, 3, 4, 5};
  EXPECT_EQ(serialize_npy(vec),
            numpy_file("{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }", "5",
                       vec.bytes));
  // Every header is a multiple of 64 bytes long and ends in '\n'.
  for (const Bytes& file : {serialize_npy(vec), serialize_npy(to_npy_array(tall))}) {
    const std::size_t header_end = 10 + (file[8] | (file[9] << 8));
    EXPECT_EQ(header_end % 64, 0u);
    EXPECT_EQ(file[header_end - 1], '\n');
  }
}

TEST(Npy, RoundTripsEveryWritableType) {
  TempFiles temp;
  std::mt19937_64 rng(11);
  const MatrixI8 i8 = testing::random_i8(17, 33, rng);
  const std::string p8 = temp("i8.npy");
  write_npy(p8, i8);
  EXPECT_EQ(read_npy_matrix_i8(p8), i8);

  std::normal_distribution<float> normal;
  MatrixF f(9, 31);
  for (Eigen::Index i = 0; i < f.size(); ++i) f.data()[i] = normal(rng);
  f(0, 0) = -0.0f;
  f(0, 1) = std::numeric_limits<float>::infinity();
  f(0, 2) = std::numeric_limits<float>::denorm_min();
  const std::string pf = temp("f.npy");
  write_npy(pf, f);
  const MatrixF back = read_npy_matrix_f(pf);
  ASSERT_EQ(back.rows(), f.rows());
  ASSERT_EQ(back.cols(), f.cols());
  EXPECT_EQ(std::memcmp(back.data(), f.data(), sizeof(float) * f.size()), 0) << "bit exact";

  MatrixI32 i32(3, 4);
  for (Eigen::Index i = 0; i < i32.size(); ++i) {
    i32.data()[i] = static_cast<std::int32_t>(rng());
  }
  i32(0, 0) = std::numeric_limits<std::int32_t>::min();
  const std::string p32 = temp("i32.npy");
  write_npy(p32, i32);
  EXPECT_EQ(read_npy_matrix_i32(p32), i32);

  Matrix<std::uint8_t> u8(2, 5);
  for (Eigen::Index i = 0; i < u8.size(); ++i) u8.data()[i] = static_cast<std::uint8_t>(i * 51);
  const std::string pu = temp("u8.npy");
  write_npy(pu, u8);
  EXPECT_EQ(read_npy_matrix_u8(pu), u8);

  // Empty matrices survive too.
  const std::string pe = temp("empty.npy");
  write_npy(pe, MatrixF(0, 7));
  const MatrixF empty = read_npy_matrix_f(pe);
  EXPECT_EQ(empty.rows(), 0);
  EXPECT_EQ(empty.cols(), 7);
}

TEST(Npy, ReadsVersion2Float64FortranOrderAnd1D) {
  TempFiles temp;
  // float64, converted to float32 on reading.
  Bytes doubles;
  for (double d : {1.5, -2.25, 1e-3, 3e38}) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, 8);
    for (int i = 0; i < 8; ++i) doubles.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
  const std::string p64 = temp("f8.npy");
  write_file(p64, raw_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n",
                           doubles, 2));
  const MatrixF m = read_npy_matrix_f(p64);
  ASSERT_EQ(m.rows(), 2);
  ASSERT_EQ(m.cols(), 2);
  EXPECT_EQ(m(0, 0), 1.5f);
  EXPECT_EQ(m(0, 1), -2.25f);
  EXPECT_EQ(m(1, 0), 1e-3f);
  EXPECT_EQ(m(1, 1), 3e38f);

  // fortran_order True: column-major on disk, transposed into C order. (np.save of a.T where a
  // is C-contiguous writes exactly this.) Double quotes and odd spacing are valid Python too.
  const std::string pf = temp("fortran.npy");
  write_file(pf, raw_file("{\"descr\":\"|i1\",\"fortran_order\":True,\"shape\":(2,3)}",
                          Bytes{1, 4, 2, 5, 3, 6}));
  MatrixI8 want(2, 3);
  want << 1, 2, 3, 4, 5, 6;
  EXPECT_EQ(read_npy_matrix_i8(pf), want);

  // 1-D: a [1 x n] row. Python 2's 3L is still a 3.
  const std::string p1 = temp("vec.npy");
  write_file(p1, raw_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }\n",
                          le_floats({1, 2, 3})));
  const MatrixF v = read_npy_matrix_f(p1);
  ASSERT_EQ(v.rows(), 1);
  ASSERT_EQ(v.cols(), 3);
  EXPECT_EQ(v(0, 2), 3.0f);
  const NpyArray raw = read_npy(p1);
  EXPECT_EQ(raw.shape, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(raw.dtype, NpyDtype::kFloat32);
}

// Tensors of any rank and the integer and bool dtypes ONNX models produce: byte for byte what
// numpy.save writes, read back with their shapes; a 3-D Fortran-order file in C order; the
// matrix readers refuse a 3-D array instead of flattening it.
TEST(Npy, TensorsOfAnyRankAndEveryDtype) {
  TempFiles temp;
  NpyArray cube;
  cube.dtype = NpyDtype::kInt64;
  cube.shape = {2, 1, 2};
  cube.bytes = {1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                3, 0, 0, 0, 0, 0, 0, 0, 4,    0,    0,    0,    0,    0,    0,    0};
  EXPECT_EQ(serialize_npy(cube),
            numpy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1, 2), }", "2",
                       cube.bytes));
  // A scalar: shape (), and numpy leaves no room for a first axis to grow.
  NpyArray scalar;
  scalar.dtype = NpyDtype::kBool;
  scalar.bytes = {1};
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  Bytes want = bytes_of(std::string("\x93NUMPY\x01\x00", 8));
  want.push_back(static_cast<std::uint8_t>(header.size()));
  want.push_back(0);
  append(want, bytes_of(header));
  want.push_back(1);
  EXPECT_EQ(serialize_npy(scalar), want);

  for (const auto& [dtype, descr] : std::vector<std::pair<NpyDtype, std::string>>{
           {NpyDtype::kInt16, "<i2"}, {NpyDtype::kUint16, "<u2"}, {NpyDtype::kInt64, "<i8"},
           {NpyDtype::kBool, "|b1"}}) {
    EXPECT_EQ(npy_descr(dtype), descr);
    NpyArray a;
    a.dtype = dtype;
    a.shape = {3, 1, 1, 2};
    a.bytes.resize(6 * npy_item_size(dtype));
    for (std::size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<std::uint8_t>(i % 2);
    const std::string path = temp(descr.substr(1) + ".npy");
    write_npy(path, a);
    const NpyArray back = read_npy(path);
    EXPECT_EQ(back.dtype, dtype) << descr;
    EXPECT_EQ(back.shape, a.shape) << descr;
    EXPECT_EQ(back.bytes, a.bytes) << descr;
  }
  const std::string ps = temp("scalar.npy");
  write_npy(ps, scalar);
  EXPECT_TRUE(read_npy(ps).shape.empty());
  EXPECT_EQ(read_npy(ps).element_count(), 1);

  // np.save of a C-order array's transpose: shape (2, 3, 2) stored column-major. Element
  // (i, j, k) sits at i + 2*j + 6*k on disk; C order wants 6*i + 2*j + k.
  Bytes disk(12);
  Bytes c_order(12);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 2; ++k) {
        const auto value = static_cast<std::uint8_t>(100 * i + 10 * j + k);
        disk[static_cast<std::size_t>(i + 2 * j + 6 * k)] = value;
        c_order[static_cast<std::size_t>(6 * i + 2 * j + k)] = value;
      }
    }
  }
  const std::string pf = temp("fortran3d.npy");
  write_file(pf, raw_file("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3, 2), }", disk));
  EXPECT_EQ(read_npy(pf).bytes, c_order);
  try {
    read_npy_matrix_u8(pf);
    ADD_FAILURE() << "a 3-D array was read as a matrix";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 dimensions; a matrix (1-D or 2-D array) is expected"),
              std::string::npos)
        << e.what();
  }
}

// Each malformed file throws std::runtime_error whose message names the file and the problem.
TEST(Npy, MalformedFilesGiveClearErrors) {
  TempFiles temp;
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
  const Bytes data16 = le_floats({1, 2, 3, 4});
  Bytes good = raw_file(ok_dict, data16);
  const struct {
    const char* name;
    Bytes file;
    const char* expect;
  } cases[] = {
      {"empty", Bytes{}, "not a .npy file"},
      {"bad_magic", bytes_of("PK\x03\x04 this is a zip"), "not a .npy file"},
      {"magic_only", bytes_of(std::string("\x93NUMPY", 6)), "truncated header"},
      {"no_length", bytes_of(std::string("\x93NUMPY\x01\x00\x40", 9)), "truncated header"},
      {"short_header", Bytes(good.begin(), good.begin() + 30), "truncated header"},
      {"version", raw_file(ok_dict, data16, 4), "unsupported .npy format version 4.0"},
      {"not_dict", raw_file("[1, 2, 3]\n", data16), "not a Python dict"},
      {"unterminated", raw_file("{'descr': '<f4', 'shape': (2, 2)\n", data16),
       "expected ',' or '}'"},
      {"missing_key", raw_file("{'descr': '<f4', 'shape': (2, 2), }\n", data16),
       "'fortran_order' is missing"},
      {"extra_key",
       raw_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': True}", data16),
       "unexpected key 'x'"},
      {"unknown_dtype",
       raw_file("{'descr': '<c8', 'fortran_order': False, 'shape': (2, 2), }", data16),
       "unsupported dtype '<c8'"},
      {"structured",
       raw_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data16),
       "structured"},
      {"big_endian",
       raw_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", data16),
       "big-endian"},
      {"bad_shape",
       raw_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2), }", data16),
       "tuple of non-negative integers"},
      {"too_many_dims",
       raw_file("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                    [] {
                      std::string dims;
                      for (int i = 0; i < 33; ++i) dims += "1, ";
                      return dims;
                    }() + "), }",
                data16),
       "at most 32 are supported"},
      {"truncated_data", Bytes(good.begin(), good.end() - 3), "truncated data"},
      {"size_mismatch",
       raw_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", data16),
       "size mismatch"},
      {"huge_shape",
       raw_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }",
                data16),
       "too large"},
      {"fortran_not_bool",
       raw_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 2), }", data16),
       "cannot parse the value of 'fortran_order'"},
  };
  for (const auto& c : cases) {
    const std::string path = temp(std::string(c.name) + ".npy");
    write_file(path, c.file);
    try {
      read_npy(path);
      ADD_FAILURE() << c.name << ": no error";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << c.name << ": " << msg;
      EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
    }
  }
  // The good file itself reads.
  const std::string path = temp("good.npy");
  write_file(path, good);
  EXPECT_EQ(read_npy_matrix_f(path).sum(), 10.0f);
}

TEST(Npy, WrongDtypeAndMissingFileAreNamed) {
  TempFiles temp;
  const std::string p = temp("i8.npy");
  write_npy(p, MatrixI8(MatrixI8::Zero(2, 2)));
  try {
    read_npy_matrix_f(p);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p + ": expected a float32 or float64 array"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_npy_matrix_i32(p), std::runtime_error);
  const std::string missing = temp("does_not_exist.npy");
  try {
    read_npy(missing);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": cannot read: no such file"),
              std::string::npos)
        << e.what();
  }
  // Not regular files: read until memory runs out, were they read at all.
  for (const auto& [path, what] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/zero", "not a regular file"}, {::testing::TempDir(), "a directory"}}) {
    try {
      read_npy(path);
      ADD_FAILURE() << path << ": no error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(write_npy(temp("no_such_dir/x.npy"), MatrixI8(MatrixI8::Zero(1, 1))),
               std::runtime_error);
}

// A command's outputs are written as one: if one of them cannot be written, none is, and no
// temporary file stays behind.
TEST(FileIo, SeveralFilesAreWrittenAllOrNone) {
  TempFiles temp;
  const std::string good = temp("good.bin");
  const std::string bad = temp("no_such_dir/bad.bin");
  const auto entries_beside = [&] {
    int n = 0;
    const std::filesystem::path dir = std::filesystem::path(good).parent_path();
    const std::string stem = std::filesystem::path(good).filename().string();
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      n += e.path().filename().string().rfind(stem, 0) == 0;
    }
    return n;
  };
  try {
    write_files_atomically({{good, "first"}, {bad, "second"}});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ": cannot write: the directory", 0), 0u)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(good));
  EXPECT_EQ(entries_beside(), 0) << "a temporary of " << good << " was left behind";
  write_files_atomically({{good, "first"}});
  std::ifstream in(good, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "first");
  EXPECT_EQ(entries_beside(), 1);
}

// A set whose last destination is a directory (found by the CLI fuzzer: `prune --permute` and
// `compress` left their first outputs in place when a later rename failed) changes nothing: the
// existing first output keeps its content, no new file appears, no temporary stays.
TEST(FileIo, DirectoryAmongSeveralOutputsChangesNothing) {
  TempFiles temp;
  const std::string existing = temp("existing.bin");
  const std::string fresh = temp("fresh.bin");
  const std::string dir = temp("a_dir.bin");
  write_files_atomically({{existing, "old"}});
  std::filesystem::create_directory(dir);
  const auto count = [&] {  // this test's entries in the shared temporary directory
    const std::string prefix = "nmsa_npy_DirectoryAmongSeveralOutputsChangesNothing_";
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(
             std::filesystem::path(existing).parent_path())) {
      n += e.path().filename().string().rfind(prefix, 0) == 0;
    }
    return n;
  };
  const auto before = count();
  try {
    write_files_atomically({{existing, "new"}, {fresh, "new"}, {dir, "new"}});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), dir + ": cannot write: a directory, not a file");
  }
  EXPECT_EQ(read_regular_file(existing), "old");
  EXPECT_FALSE(std::filesystem::exists(fresh));
  EXPECT_EQ(count(), before);
  EXPECT_THROW(require_output_path("/dev/null"), std::runtime_error);
  std::filesystem::remove(dir);
}

// Outputs in directories that do not exist yet: made on success, and on a failed write removed
// again (`nmsa run --output` into a new directory left it behind, empty, when a write failed).
TEST(FileIo, FailedWriteRemovesTheDirectoriesItCreated) {
  TempFiles temp;
  const std::filesystem::path root = temp("new_root");
  const std::string nested = (root / "a" / "b" / "out.bin").string();
  const std::string blocked = temp("blocked.bin");
  std::filesystem::create_directory(blocked);  // a directory where a file must go
  try {
    write_files_creating_directories({{nested, "x"}, {blocked, "y"}});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), blocked + ": cannot write: a directory, not a file");
  }
  EXPECT_FALSE(std::filesystem::exists(root)) << root << " was left behind";
  EXPECT_TRUE(std::filesystem::is_directory(blocked));  // not created here: kept
  write_files_creating_directories({{nested, "x"}});
  EXPECT_EQ(read_regular_file(nested), "x");
  std::filesystem::remove_all(root);
  std::filesystem::remove(blocked);
}

// The element count never wraps: a zero dimension beside huge ones is 0 elements, and a product
// beyond int64 is an error naming the shape.
TEST(Npy, ElementCountIsChecked) {
  NpyArray a;
  a.shape = {0, std::int64_t{1} << 62, std::int64_t{1} << 62};
  EXPECT_EQ(a.element_count(), 0);
  a.shape = {std::int64_t{1} << 62, std::int64_t{1} << 62, 0};
  EXPECT_EQ(a.element_count(), 0);
  a.shape = {std::int64_t{1} << 32, std::int64_t{1} << 32};
  EXPECT_THROW(a.element_count(), std::runtime_error);
  a.shape = {3, -1};
  EXPECT_THROW(a.element_count(), std::runtime_error);
  a.shape = {3, 4};
  EXPECT_EQ(a.element_count(), 12);
}

// Every prefix of a valid file, and every single-byte corruption of its header, either parses or
// throws std::runtime_error: never a crash or another exception type.
TEST(Npy, NoPrefixOrCorruptionCrashes) {
  MatrixF f(2, 3);
  f << 1, 2, 3, 4, 5, 6;
  const Bytes good = serialize_npy(to_npy_array(f));
  for (std::size_t len = 0; len < good.size(); ++len) {
    EXPECT_THROW(parse_npy(Bytes(good.begin(), good.begin() + static_cast<long>(len)), "prefix"),
                 std::runtime_error)
        << "length " << len;
  }
  std::mt19937_64 rng(5);
  for (std::size_t pos = 0; pos < 128; ++pos) {
    for (int trial = 0; trial < 4; ++trial) {
      Bytes bad = good;
      bad[pos] = static_cast<std::uint8_t>(rng());
      try {
        parse_npy(bad, "corrupt");
      } catch (const std::runtime_error&) {
      }
    }
  }
}

}  // namespace
}  // namespace nmsa
