// The maxima of free-text fields that callers send and the daemon keeps (in memory, in events, in
// the store): each is documented in docs/API.md "Limits", and a value past one is refused (422
// naming the field) rather than cut, so nothing stored differs from what was sent. Issue 31: a
// 1 MB quarantine reason, sent 600 times, grew the daemon by 676 MB.
#pragma once
#include <cstddef>

namespace gauntlet::limits {

inline constexpr size_t kReasonBytes = 1000;         // a quarantine or drain reason
inline constexpr size_t kLabels = 64;                // labels on one node
inline constexpr size_t kLabelKeyBytes = 64;         // a label's name
inline constexpr size_t kLabelValueBytes = 256;      // a label's value
inline constexpr size_t kFingerprintBytes = 64 << 10;  // a node's or a report's fingerprint, as JSON
inline constexpr size_t kSignatureBytes = 512;       // a reported failure signature
inline constexpr size_t kStageNameBytes = 200;       // a reported failing stage
inline constexpr size_t kLauncherNameBytes = 200;    // PUT /launchers/{name}
inline constexpr size_t kLauncherKindBytes = 64;
inline constexpr size_t kLauncherJobs = 10000;       // jobs in one launcher report
inline constexpr size_t kLauncherReportBytes = 256 << 10;  // one launcher report (its route's body limit)
inline constexpr size_t kLaunchers = 64;             // launchers whose reports are live at once
inline constexpr size_t kParamFilters = 64;          // param.NAME=VALUE filters in one trial listing

}  // namespace gauntlet::limits
