// Small math shared by the engine benchmarks (independent of mbstudy, so that the models they
// build for each engine do not lean on the code under comparison): a seeded random number
// generator, 3x3 rotations (row-major), quaternions (w, x, y, z) and printf into a std::string.
#ifndef MBS_BENCHMARKS_BENCH_MATH_HPP_
#define MBS_BENCHMARKS_BENCH_MATH_HPP_

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

namespace mbs_bench {

constexpr double kPi = 3.14159265358979323846;


struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double)(next() >> 11) * 0x1.0p-53; }
  double uniform(double a, double b) { return a + (b - a) * uniform(); }
  int below(int n) { return (int)(next() % (uint64_t)n); }
  double gauss() {
    double u1 = uniform();
    while (u1 <= 1e-300) u1 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * kPi * uniform());
  }
  void unit_quat(double q[4]) {
    double n2 = 0;
    do {
      for (int i = 0; i < 4; i++) q[i] = gauss();
      n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    } while (n2 < 1e-6);
    const double n = std::sqrt(n2);
    for (int i = 0; i < 4; i++) q[i] /= n;
  }
};

// row-major 3x3 matrices
inline void mat_mul(double r[9], const double a[9], const double b[9]) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}
inline void mat_vec(double r[3], const double a[9], const double v[3]) {
  for (int i = 0; i < 3; i++) r[i] = a[3 * i] * v[0] + a[3 * i + 1] * v[1] + a[3 * i + 2] * v[2];
}
inline void mat_tvec(double r[3], const double a[9], const double v[3]) {
  for (int i = 0; i < 3; i++) r[i] = a[i] * v[0] + a[3 + i] * v[1] + a[6 + i] * v[2];
}
inline void rot_axis(double R[9], int axis, double a) {
  const double c = std::cos(a), s = std::sin(a);
  for (int i = 0; i < 9; i++) R[i] = 0;
  const int i1 = (axis + 1) % 3, i2 = (axis + 2) % 3;
  R[3 * axis + axis] = 1;
  R[3 * i1 + i1] = c;
  R[3 * i1 + i2] = -s;
  R[3 * i2 + i1] = s;
  R[3 * i2 + i2] = c;
}
// body-fixed X-Y-Z: R = Rx(a0) Ry(a1) Rz(a2)
inline void rot_body_xyz(double R[9], const double a[3]) {
  double Rx[9], Ry[9], Rz[9], T[9];
  rot_axis(Rx, 0, a[0]);
  rot_axis(Ry, 1, a[1]);
  rot_axis(Rz, 2, a[2]);
  mat_mul(T, Rx, Ry);
  mat_mul(R, T, Rz);
}
// URDF roll-pitch-yaw (fixed axes X, Y, Z): R = Rz(y) Ry(p) Rx(r)
inline void rot_to_rpy(double rpy[3], const double R[9]) {
  rpy[1] = std::atan2(-R[6], std::sqrt(R[0] * R[0] + R[3] * R[3]));
  rpy[0] = std::atan2(R[7], R[8]);
  rpy[2] = std::atan2(R[3], R[0]);
}
inline void quat_to_rot(double R[9], const double q_in[4]) {
  const double n = std::sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] +
                             q_in[3] * q_in[3]);
  const double w = q_in[0] / n, x = q_in[1] / n, y = q_in[2] / n, z = q_in[3] / n;
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}
inline void rot_to_quat(double q[4], const double R[9]) {
  const double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    const double s = 2 * std::sqrt(1 + tr);
    q[0] = s / 4;
    q[1] = (R[7] - R[5]) / s;
    q[2] = (R[2] - R[6]) / s;
    q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    const double s = 2 * std::sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s;
    q[1] = s / 4;
    q[2] = (R[1] + R[3]) / s;
    q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    const double s = 2 * std::sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s;
    q[1] = (R[1] + R[3]) / s;
    q[2] = s / 4;
    q[3] = (R[5] + R[7]) / s;
  } else {
    const double s = 2 * std::sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s;
    q[1] = (R[2] + R[6]) / s;
    q[2] = (R[5] + R[7]) / s;
    q[3] = s / 4;
  }
  if (q[0] < 0)
    for (int i = 0; i < 4; i++) q[i] = -q[i];
}
inline void quat_mul(double r[4], const double a[4], const double b[4]) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

inline std::string strf(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string strf(const char* f, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  return b;
}

}  // namespace mbs_bench

#endif  // MBS_BENCHMARKS_BENCH_MATH_HPP_
