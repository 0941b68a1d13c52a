#include "vec_add.cuh"
int main() { return RunVecAdd(0); }
