#include <infer/infer.hpp>
#include <iostream>
int main() {
  infer::GraphBuilder b;
  auto x = b.input("x", infer::DType::f32, {2, 3});
  b.output("y", b.relu(x));
  auto g = b.build();
  std::vector<float> v{-1, 2, -3, 4, -5, 6};
  auto out = g.run(infer::Batch{{"x", infer::Tensor::from_host(v.data(), infer::DType::f32, {2, 3})}}, infer::Device::CPU);
  auto y = out["y"].to(infer::Device::CPU);
  const float* p = y.data<float>();
  std::cout << p[0] << " " << p[1] << " " << p[5] << "\n";
}
