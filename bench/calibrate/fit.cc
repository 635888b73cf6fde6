#include "calibrate/fit.h"

#include <algorithm>
#include <cmath>

namespace braid::calibrate {

std::optional<std::vector<double>> leastSquares(const std::vector<Observation>& obs) {
  if (obs.empty()) return std::nullopt;
  const size_t k = obs.front().x.size();
  // Two or three unknowns in practice; the bound also tells the compiler k + 1 cannot overflow.
  constexpr size_t kMaxUnknowns = 8;
  if (k == 0 || k > kMaxUnknowns || obs.size() < k) return std::nullopt;
  // Normal equations (X'W'WX) beta = X'W'Wy, solved by Gaussian elimination
  // with partial pivoting: k is 2 or 3, so nothing more careful is needed.
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0.0));
  for (const Observation& o : obs) {
    const double w2 = o.weight * o.weight;
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) a[i][j] += w2 * o.x[i] * o.x[j];
      a[i][k] += w2 * o.x[i] * o.y;
    }
  }
  double scale = 0;
  for (size_t i = 0; i < k; ++i) scale = std::max(scale, std::fabs(a[i][i]));
  for (size_t col = 0; col < k; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < k; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    }
    // A pivot this small against the diagonal means a regressor the data never varied.
    if (std::fabs(a[pivot][col]) <= 1e-12 * scale) return std::nullopt;
    std::swap(a[col], a[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c <= k; ++c) a[r][c] -= f * a[col][c];
    }
  }
  std::vector<double> beta(k);
  for (size_t i = 0; i < k; ++i) beta[i] = a[i][k] / a[i][i];
  return beta;
}

namespace {

double weightedResidual(const std::vector<Observation>& obs, const std::vector<double>& beta) {
  double sum = 0;
  for (const Observation& o : obs) {
    double fit = 0;
    for (size_t i = 0; i < beta.size(); ++i) fit += o.x[i] * beta[i];
    sum += o.weight * o.weight * (fit - o.y) * (fit - o.y);
  }
  return sum;
}

}  // namespace

std::optional<std::vector<double>> nonNegativeLeastSquares(const std::vector<Observation>& obs) {
  if (obs.empty()) return std::nullopt;
  const size_t k = obs.front().x.size();
  if (k == 0 || k > 8) return std::nullopt;
  std::optional<std::vector<double>> best;
  double bestResidual = 0;
  // Every subset of free unknowns (bit i set: unknown i is fitted), the rest 0.
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    std::vector<Observation> reduced;
    for (const Observation& o : obs) {
      Observation r{{}, o.y, o.weight};
      for (size_t i = 0; i < k; ++i) {
        if (mask & (1u << i)) r.x.push_back(o.x[i]);
      }
      reduced.push_back(std::move(r));
    }
    auto free = leastSquares(reduced);
    if (!free) continue;
    std::vector<double> beta(k, 0.0);
    bool feasible = true;
    for (size_t i = 0, j = 0; i < k; ++i) {
      if (!(mask & (1u << i))) continue;
      beta[i] = (*free)[j++];
      feasible = feasible && beta[i] >= 0;
    }
    if (!feasible) continue;
    const double residual = weightedResidual(obs, beta);
    if (!best || residual < bestResidual) {
      best = beta;
      bestResidual = residual;
    }
  }
  return best;
}

FitError relativeError(const std::vector<double>& measured, const std::vector<double>& predicted) {
  std::vector<double> errors;
  for (size_t i = 0; i < measured.size() && i < predicted.size(); ++i) {
    if (measured[i] > 0) errors.push_back(std::fabs(predicted[i] - measured[i]) / measured[i]);
  }
  FitError e;
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  e.median = errors[errors.size() / 2];
  e.max = errors.back();
  return e;
}

}  // namespace braid::calibrate
