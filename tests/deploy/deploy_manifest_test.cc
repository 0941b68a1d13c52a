#include <gtest/gtest.h>
TEST(Deploy, Placeholder) {}
