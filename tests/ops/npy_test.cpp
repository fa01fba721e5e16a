// NumPy's .npy and .npz files (ops/npy.cpp), read from files NumPy wrote
// (tests/data/numpy, made by scripts/numpy_test_data.py; the values below
// are the arrays that script builds), written and read back by tagflow, and
// written by tagflow and read back by NumPy where Debian's python3-numpy is
// installed.
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ops/npy.hpp"

using namespace tagflow::ops;

namespace {

std::string data(const std::string& name) { return std::string(TAGFLOW_TEST_DATA) + "/numpy/" + name; }

Tensor read(const std::string& name) {
  Expected<Tensor> t = read_npy_file(data(name));
  BOOST_TEST_REQUIRE(t.ok(), name << ": " << t.status().to_string());
  return *t;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(std::string_view bytes) {
  Expected<Tensor> t = parse_npy(bytes, "x.npy");
  return t.ok() ? std::string() : t.status().to_string();
}

bool numpy_present() { return std::system("/usr/bin/python3 -c 'import numpy' > /dev/null 2>&1") == 0; }

}  // namespace

BOOST_AUTO_TEST_SUITE(npy)

BOOST_AUTO_TEST_CASE(reads_the_numeric_arrays_numpy_writes) {
  BOOST_TEST(read("f32_2x3.npy").debug_string() == "float32[2,3] [[-1,-0.5,0],[0.5,1,1.5]]");
  BOOST_TEST(read("i32_scalar.npy").debug_string() == "int32[] 7");
  BOOST_TEST(read("bool.npy").debug_string() == "bool[2,2] [[true,false],[false,true]]");
  BOOST_TEST(read("u8.npy").debug_string() == "uint8[3] [0,7,255]");
  BOOST_TEST(read("f32_empty_0x3.npy").shape().to_string() == "[0,3]");
  BOOST_TEST(read("f32_v2.npy").debug_string() == "float32[2] [1.5,2.5]");
  Tensor h = read("f16.npy");
  BOOST_TEST_REQUIRE((h.dtype() == DType::half));
  BOOST_TEST(static_cast<float>(h.data<Eigen::half>()[0]) == 0.5f);
  BOOST_TEST(static_cast<float>(h.data<Eigen::half>()[1]) == -2.0f);
  BOOST_TEST(static_cast<float>(h.data<Eigen::half>()[2]) == 65504.0f);
}

BOOST_AUTO_TEST_CASE(big_endian_arrays_are_swapped_word_by_word) {
  BOOST_TEST(read("i64_big_endian.npy").debug_string() == "int64[3] [1,-2,300000000000]");
  Tensor c = read("c64_big_endian.npy");
  BOOST_TEST_REQUIRE((c.dtype() == DType::complex64));
  BOOST_TEST((c.data<std::complex<float>>()[0] == std::complex<float>(1, 2)));
  BOOST_TEST((c.data<std::complex<float>>()[1] == std::complex<float>(0, -3.5f)));
}

BOOST_AUTO_TEST_CASE(fortran_order_is_read_into_row_major_order) {
  // np.asfortranarray(np.arange(24).reshape(2, 3, 4)): the same array, so
  // row-major order reads 0..23.
  Tensor t = read("f64_fortran.npy");
  BOOST_TEST_REQUIRE(t.shape().to_string() == "[2,3,4]");
  for (int i = 0; i < 24; ++i) BOOST_TEST(t.data<double>()[i] == i);
}

BOOST_AUTO_TEST_CASE(byte_and_unicode_strings_become_string_tensors) {
  Tensor b = read("bytes.npy");
  BOOST_TEST_REQUIRE((b.dtype() == DType::string));
  BOOST_TEST(b.data<std::string>()[0] == "ab");
  BOOST_TEST(b.data<std::string>()[1] == "");
  BOOST_TEST(b.data<std::string>()[2] == "xyz");
  Tensor u = read("unicode.npy");
  BOOST_TEST(u.data<std::string>()[0] == "h\xc3\xa9llo");
  BOOST_TEST(u.data<std::string>()[1] == "\xcf\x89");
  BOOST_TEST(u.data<std::string>()[2] == "\xf0\x9f\x98\x80");
}

BOOST_AUTO_TEST_CASE(object_arrays_are_refused_naming_the_pickle) {
  Expected<Tensor> t = read_npy_file(data("object.npy"));
  BOOST_TEST_REQUIRE(!t.ok());
  BOOST_TEST(t.status().code() == Error::unimplemented);
  BOOST_TEST(t.status().message().find("object array (dtype 'O')") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(npz_archives_stored_and_deflated) {
  Expected<std::vector<std::string>> keys = npz_keys(data("arrays.npz"));
  BOOST_TEST_REQUIRE(keys.ok());
  BOOST_TEST(keys->size() == 2u);
  Expected<Tensor> x = read_npz_array(data("arrays.npz"), "x");
  BOOST_TEST_REQUIRE(x.ok());
  BOOST_TEST(x->debug_string() == "float32[3] [1,2,5]");
  Expected<Tensor> n = read_npz_array(data("arrays.npz"), "n");
  BOOST_TEST_REQUIRE(n.ok());
  BOOST_TEST(n->debug_string() == "int32[2,2] [[1,2],[3,4]]");
  Expected<Tensor> only = read_npz_array(data("compressed.npz"), "only");
  BOOST_TEST_REQUIRE(only.ok(), only.status().to_string());
  BOOST_TEST_REQUIRE(only->num_elements() == 100);
  for (int i = 0; i < 100; ++i) BOOST_TEST(only->data<int64_t>()[i] == i);

  Expected<Tensor> missing = read_npz_array(data("arrays.npz"), "y");
  BOOST_TEST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.status().code() == Error::not_found);
  BOOST_TEST(missing.status().message().find("holds no array 'y' (it holds: ") != std::string::npos);
  Expected<Tensor> not_zip = read_npz_array(data("f32_2x3.npy"), "x");
  BOOST_TEST_REQUIRE(!not_zip.ok());
  BOOST_TEST(not_zip.status().message().find("is not a readable .npz archive") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(malformed_files_are_errors_naming_what_is_wrong) {
  const std::string good = bytes_of(data("f32_2x3.npy"));
  BOOST_TEST(error_of("") != "");
  BOOST_TEST(error_of("PK\x03\x04 not numpy").find("magic bytes") != std::string::npos);
  // Every truncation of a good file is an error, none a crash.
  for (size_t n = 0; n < good.size(); ++n) BOOST_TEST(error_of(std::string_view(good).substr(0, n)) != "", n);
  BOOST_TEST(error_of(good + "x").find("needs 24 bytes of data, and the file holds 25") != std::string::npos);
  std::string version = good;
  version[6] = 4;
  BOOST_TEST(error_of(version).find("format version 4.0") != std::string::npos);
  std::string descr = good;
  descr.replace(descr.find("<f4"), 3, "<f3");
  BOOST_TEST(error_of(descr).find("dtype '<f3' has no tensor dtype") != std::string::npos);
  std::string key = good;
  key.replace(key.find("shape"), 5, "shapf");
  BOOST_TEST(error_of(key).find("unknown key 'shapf'") != std::string::npos);
  std::string huge = good;
  huge.replace(huge.find("(2, 3)"), 6, "(9999999999999, 99999999999)");
  BOOST_TEST(error_of(huge) != "");  // the header no longer fits its length, or the shape is refused
  std::string zero_width = bytes_of(data("bytes.npy"));
  zero_width.replace(zero_width.find("|S3"), 3, "|S0");
  BOOST_TEST(error_of(zero_width).find("zero width") != std::string::npos);
  std::string boolean = bytes_of(data("bool.npy"));
  boolean.back() = 2;
  BOOST_TEST(error_of(boolean).find("neither 0 nor 1") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(written_arrays_read_back_equal) {
  std::vector<Tensor> arrays = {
      Tensor::from_vector<float>(Shape{2, 2}, {1.5f, -2, 0, 3}),
      Tensor::scalar<int64_t>(-5),
      Tensor::from_vector<bool>(Shape{3}, {true, false, true}),
      Tensor::from_vector<std::string>(Shape{2}, {"tag", ""}),
      Tensor::from_vector<int8_t>(Shape{0, 2}, {}),
      Tensor::from_vector<std::complex<double>>(Shape{1}, {{1, -1}}),
  };
  for (const Tensor& t : arrays) {
    Expected<std::string> bytes = npy_bytes(t);
    BOOST_TEST_REQUIRE(bytes.ok());
    BOOST_TEST(bytes->find('\n') % 64 == 63u);  // the data starts 64-byte aligned
    Expected<Tensor> back = parse_npy(*bytes, "written.npy");
    BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
    BOOST_TEST(back->debug_string() == t.debug_string());
  }
  Expected<std::string> bf = npy_bytes(Tensor::from_vector<Eigen::bfloat16>(Shape{1}, {Eigen::bfloat16(2.5f)}));
  BOOST_TEST_REQUIRE(bf.ok());
  BOOST_TEST(parse_npy(*bf, "bf.npy")->debug_string() == "float32[1] [2.5]");
  BOOST_TEST(!npy_bytes(Tensor(DType::resource, Shape{})).ok());
}

BOOST_AUTO_TEST_CASE(numpy_reads_what_tagflow_writes) {
  if (!numpy_present()) {
    BOOST_TEST_MESSAGE("no /usr/bin/python3 with numpy: skipped (bash scripts/setup.sh installs python3-numpy)");
    return;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tagflow_npy_test";
  std::filesystem::create_directories(dir);
  BOOST_TEST_REQUIRE(write_npy_file((dir / "f.npy").string(),
                                    Tensor::from_vector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6.5f})).ok());
  BOOST_TEST_REQUIRE(write_npy_file((dir / "s.npy").string(),
                                    Tensor::from_vector<std::string>(Shape{2}, {"ab", "c"})).ok());
  BOOST_TEST_REQUIRE(write_npy_file((dir / "i.npy").string(), Tensor::scalar<int32_t>(-3)).ok());
  const std::string check =
      "/usr/bin/python3 -c \"import numpy as np, sys; d=sys.argv[1]; "
      "f=np.load(d+'/f.npy'); s=np.load(d+'/s.npy'); i=np.load(d+'/i.npy'); "
      "assert f.dtype==np.float32 and f.shape==(2,3) and f[1,2]==6.5 and f.sum()==21.5, f; "
      "assert list(s)==[b'ab', b'c'], s; assert i.dtype==np.int32 and i.shape==() and i==-3, i\" " +
      dir.string();
  BOOST_TEST(std::system(check.c_str()) == 0);
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
