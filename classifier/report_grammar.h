// The grammar tools and frameworks use to report three kinds of fact, read by meaning rather than
// by a sentence copied from one log (issue 29): a refusal that names the hardware ("requires
// sm_100a", "only supported on Hopper", "SM100-only"), a ptxas/nvcc target error, and a printed
// mismatch or tolerance report. Where a rule needs a word list, each list says where it comes from
// (docs/CLASSIFIER.md "Where the word lists come from"). Inputs are ASCII-lowercased lines
// (`lower`), `raw` the same bytes unlowered. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet::classifier {

// "sm_90", "sm90", "SM100", "sm_120a", "SM>=80", "sm 90": "sm" (not inside a word) then a number.
bool MentionsSmArch(std::string_view lower);

// The message names GPU hardware: an sm/compute_ target, a compute capability, an NVIDIA
// architecture family name, or "this/the current/your GPU|device|platform|hardware" (the
// refused-on-this-machine grammar; "gpu" or "device" alone is no arch: "device-side", "GPU 0").
bool MentionsArch(std::string_view lower);

// A phrase that refuses something on some hardware ("only supported on", "requires sm",
// "not supported on", "minimum capability", "without targeting", ...; the list is
// kArchRefusalPhrases). The arch gate needs one of these and MentionsArch, or ArchOnly.
bool HasArchRefusalPhrase(std::string_view lower);

// The arch gate's prefilter needles: every refusal phrase, and "-only".
std::vector<std::string> ArchGateNeedles();

// "<arch>-only": an arch token right before "-only" ("SM100-only", "sm90a-only", "Hopper-only"),
// not "PCIe-only" or "weight-only".
bool ArchOnly(std::string_view lower);

// ptxas/nvcc saying the code cannot be built for this target: "error : Instruction 'x' not
// supported on .target 'sm_120'", "Feature '.bf16' requires .target sm_80 or higher", "PTX with
// .target 'sm_90a' cannot be compiled for architecture 'sm_90'". Returns the normalised error
// text after ptxas's "error :"/"fatal :" (the signature detail), nullopt for any other line.
std::optional<std::string> PtxasTargetError(std::string_view raw, std::string_view lower);

// A printed comparison that failed: torch.testing ("Tensor-likes are not close", "Mismatched
// elements: 12 / 1024"), numpy ("Not equal to tolerance", "Arrays are not equal"), a count of
// differing elements ("MISMATCH 3670016/3670016 elements differ"), an error over its tolerance
// ("exceeded the margin of error", "max_abs_diff=0.5 tol=1e-3", "rel_err=1.0 (tolerance 2e-2)":
// the error value must exceed the tolerance value, so a passing report stays quiet).
bool IsMismatchReport(std::string_view lower);

// The program says memory ran out without using CUDA's words: "Not enough memory",
// "insufficient memory", "failed to allocate ... memory".
bool SaysOutOfMemory(std::string_view lower);

}  // namespace gauntlet::classifier
