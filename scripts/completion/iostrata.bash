# SPDX-License-Identifier: MIT
# Bash completion for iostrata, installed by `make install` as
# PREFIX/share/bash-completion/completions/iostrata (bash-completion loads it on first use; or
# `source` it). It completes commands, each command's options, and file names where a command takes
# them. The commands and options come from the binary being completed (`iostrata help`,
# `iostrata CMD --help`), so a new command or option completes without an edit here. It does not
# need the bash-completion package's helpers.

# The usage text of the command at words [1, upto): `iostrata CMD [SUB] --help`.
_iostrata_usage() {
	"$1" "${@:2}" --help 2>/dev/null
}

_iostrata() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	local prog=${COMP_WORDS[0]} cmd= sub= i w after_dashdash=0 operands=0
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	[[ $prog == "~/"* ]] && prog=$HOME/${prog#"~/"}

	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ -z "$cmd" ]; then
			case $w in -*) ;; *) cmd=$w ;; esac
		elif [ "$w" = -- ]; then
			after_dashdash=1
		elif [ "$cmd" = kernel ] && [ "$w" = maps ] && [ -z "$sub" ] && [ $operands -eq 0 ]; then
			sub=maps
		elif [[ $w != -* ]]; then
			operands=$((operands + 1))
		fi
	done

	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$prog" help 2>/dev/null | awk '/^  [a-z]/ {print $1}') help" -- "$cur"))
		fi
		return 0
	fi
	if [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq 2 ] &&
			COMPREPLY=($(compgen -W "$("$prog" help 2>/dev/null | awk '/^  [a-z]/ {print $1}')" -- "$cur"))
		return 0
	fi

	# `run [options] [--] CMD ARGS...`: the command, then its own arguments (file names)
	if [ "$cmd" = run ] && { [ $after_dashdash -eq 1 ] || [ $operands -gt 0 ]; }; then
		if [ $operands -eq 0 ]; then
			COMPREPLY=($(compgen -c -- "$cur" | sort -u))
		else
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	fi

	local usage
	if [ -n "$sub" ]; then
		usage=$(_iostrata_usage "$prog" "$cmd" "$sub")
	else
		usage=$(_iostrata_usage "$prog" "$cmd")
	fi
	# the value of an option: the usage names it ("--top N", "-o DIR", "--events FILE")
	if [[ $prev == -* ]] && [ $after_dashdash -eq 0 ]; then
		local meta
		meta=$(printf '%s\n' "$usage" | grep -oE -- "(^|[[ ])$prev [A-Z][A-Z:|.,]*" | head -n 1 | awk '{print $2}')
		case $meta in
		'') ;;
		DIR*)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -d -- "$cur"))
			return 0
			;;
		FILE* | PATH* | SRC* | MNT* | PREFIX* | LIVEFILE*)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur"))
			return 0
			;;
		L,*) # --layers: a comma-separated list
			local done=
			[[ $cur == *,* ]] && done=${cur%,*},
			COMPREPLY=($(compgen -P "$done" -W "syscall pagecache fs block mpiio" -- "${cur##*,}"))
			return 0
			;;
		*) return 0 ;; # a number, an id, a pattern: nothing to offer
		esac
	fi
	if [[ $cur == -* ]] && [ $after_dashdash -eq 0 ]; then
		# the options of the synopsis ("[--json]", "[--pid P | --cgroup PATH]") and of the
		# option list ("  -q, --quiet"), not those named in prose
		COMPREPLY=($(compgen -W "--help $(printf '%s\n' "$usage" |
			grep -oE -- '(\[|^ +|, |\| )--?[a-zA-Z][-a-zA-Z0-9]*' | sed 's/^[[ ,|]*//' | sort -u)" -- "$cur"))
		return 0
	fi
	if [ "$cmd" = kernel ] && [ -z "$sub" ]; then
		COMPREPLY=($(compgen -W "maps" -- "$cur"))
		return 0
	fi
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -f -- "$cur"))
	return 0
}
complete -F _iostrata iostrata
