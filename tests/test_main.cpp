// The entry point shared by every Boost.Test suite of tagflow.
#define BOOST_TEST_MODULE tagflow
#include <boost/test/unit_test.hpp>
