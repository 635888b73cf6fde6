// TEMPORARY placeholder while braid-calibrate is first run.
#include "tune/cost_model.h"

namespace braid::tune {

Model Model::calibratedDefaults() {
  constexpr int kSimple = 0, kLl = 1;
  Model m;
  m.callUs = 0.2;
  m.intraHost[kSimple] = {0.1, 5};
  m.intraHost[kLl] = {0.1, 2.5};
  m.intraHostShared[kSimple] = {10, 3};
  m.intraHostShared[kLl] = {10, 1.5};
  m.interHost[kSimple] = {0.1, 5};
  m.interHost[kLl] = {0.1, 2.5};
  m.oneShot[kSimple] = {0.2, 0.1, 5};
  m.oneShot[kLl] = {0.2, 0.1, 2.5};
  return m;
}

}  // namespace braid::tune
