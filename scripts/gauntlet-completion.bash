# bash completion for gauntlet.
#
# Use: `source scripts/gauntlet-completion.bash` from ~/.bashrc, or copy this file to
# ~/.local/share/bash-completion/completions/gauntlet (loaded on the first TAB).
#
# The completion function itself comes from the binary: `gauntlet completion bash` generates it
# from the command tree (subcommands, flags, and the choices of flags like --format), so it always
# matches the installed version and never needs editing here. `gauntlet` must be on PATH.
if _gauntlet_completion_src="$(command gauntlet completion bash 2>/dev/null)"; then
  eval "$_gauntlet_completion_src"
fi
unset _gauntlet_completion_src
