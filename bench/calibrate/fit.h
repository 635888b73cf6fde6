// Least squares on the cost model's own formulas: each measured time is a
// sum of unknown figures times known regressors (hop counts, bytes), so the
// figures are the solution of a small linear system.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace braid::calibrate {

/// One measured time and the regressors the model multiplies the unknowns by.
struct Observation {
  std::vector<double> x;  ///< one value per unknown
  double y = 0;           ///< measured microseconds, less what is already known
  double weight = 1;      ///< usually 1 / measured time: the fit minimises relative errors
};

/// The unknowns minimising sum(weight^2 * (x . beta - y)^2), or nothing when
/// the observations do not determine them (too few, or collinear: a
/// regressor that never varies alongside another).
std::optional<std::vector<double>> leastSquares(const std::vector<Observation>& obs);

/// The same with every unknown >= 0 (figures are times and inverse rates):
/// of the fits with some unknowns held at 0 and the others free, the one
/// with the smallest weighted residual whose free unknowns come out >= 0.
/// Noise can make an unconstrained fit trade a negative latency for a
/// larger one elsewhere; this keeps both physical.
std::optional<std::vector<double>> nonNegativeLeastSquares(const std::vector<Observation>& obs);

/// Relative errors |predicted - measured| / measured of a fit.
struct FitError {
  double median = 0;
  double max = 0;
};
/// `measured[i]` against `predicted[i]`.
FitError relativeError(const std::vector<double>& measured, const std::vector<double>& predicted);

}  // namespace braid::calibrate
