#!/usr/bin/env bash
# `make install` into a temporary PREFIX (and with DESTDIR), `make uninstall` after it: exactly the
# expected files, nothing left; the installed binary finds the installed library
# (PREFIX/lib/iostrata) and captures a program's exact bytes; every man page renders without a
# single groff or man warning and has the sections every page must have, one page per command of
# `iostrata help`; the bash completion loads and completes commands, options and `kernel maps`;
# the source builds from a tarball without .git and then names no git revision. docs/INSTALL.md.
source "$(dirname "$0")/../lib.sh"
T=$(realpath "$T")
BUILD=${IOSTRATA_BUILD:-build}
# install what the tests run against, never rebuild it (a sanitizer build needs its flags)
MK=(make -s -C "$ROOT" B="$BUILD" -o "$BUILD/iostrata" -o "$BUILD/iostratad" -o "$BUILD/libiostrata.so"
	-o "$BUILD/libiostrata-mpich.so" -o "$BUILD/libiostrata-ompi.so" -o "$BUILD/libiostrata-hdf5.so")
P="$T/prefix"

PAGES=$(cd "$ROOT/docs/man" && ls *.1)
expected() { # PREFIX [ETC]: the files make install puts there (the configuration in ETC, else PREFIX/etc)
	{
		echo "$1/bin/iostrata"
		echo "$1/bin/iostratad"
		echo "$1/lib/systemd/system/iostratad.service"
		echo "${2:-$1/etc}/iostrata/iostratad.conf"
		echo "$1/lib/iostrata/libiostrata.so"
		# the companions this build made (MPICH, Open MPI: where their compilers are installed)
		for c in mpich ompi hdf5; do
			[ -f "$ROOT/$BUILD/libiostrata-$c.so" ] && echo "$1/lib/iostrata/libiostrata-$c.so"
		done
		echo "$1/share/bash-completion/completions/iostrata"
		for p in $PAGES; do echo "$1/share/man/man1/$p"; done
	} | sort
}

"${MK[@]}" install PREFIX="$P" >"$T/inst.out" 2>&1
eq "make install PREFIX: exit 0" 0 $?
eq "make install PREFIX: exactly the expected files" "$(expected "$P")" "$(find "$P" -type f | sort)"
eq "installed modes: binary 755, library and pages 644" "755 644 644 644" \
	"$(stat -c %a "$P/bin/iostrata" "$P/lib/iostrata/libiostrata.so" "$P/share/man/man1/iostrata.1" \
		"$P/share/bash-completion/completions/iostrata" | xargs)"
eq "installed binary and library are the built ones" "same same" \
	"$(cmp -s "$P/bin/iostrata" "$ROOT/$BUILD/iostrata" && echo same) $(cmp -s "$P/lib/iostrata/libiostrata.so" "$ROOT/$BUILD/libiostrata.so" && echo same)"

# --- the installed binary runs programs with the installed library -----------------------------
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_LIB
"$P/bin/iostrata" run -q -o "$T/j0" -- true
eq "installed: iostrata run -- true: exit 0, one log" "0 1" "$? $(ls "$T"/j0/*.iost | wc -l)"
"$P/bin/iostrata" report "$T/j0" >"$T/rep0" 2>"$T/err"
eq "installed: iostrata report of it: exit 0, 1 log, stderr empty" "0 1 0" \
	"$? $(head -n 1 "$T/rep0" | grep -c ', 1 process, 1 log, ') $(wc -c <"$T/err")"
"$P/bin/iostrata" run -q -o "$T/j1" -- sh -c "grep -c '$P/lib/iostrata/libiostrata.so' /proc/self/maps >'$T/maps'"
eq "installed: the program maps PREFIX/lib/iostrata/libiostrata.so" 0 "$(( $(cat "$T/maps") == 0 ))"
"$P/bin/iostrata" run -q -o "$T/j2" -- dd if=/dev/zero of="$T/f" bs=4096 count=10 status=none
eq "installed: dd's 10 writes of 40960 bytes, from report --json" "10 40960" \
	"$(IOSTRATA="$P/bin/iostrata" jcount "$T/j2" posix "$T/f" writes) $(IOSTRATA="$P/bin/iostrata" jcount "$T/j2" posix "$T/f" bytes_written)"
VERSION=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
eq "installed: --version names the Makefile's VERSION" 1 "$("$P/bin/iostrata" --version | grep -c "^iostrata $VERSION\b")"

# --- man pages ----------------------------------------------------------------------------------
export MANPATH="$P/share/man" MANWIDTH=100
for p in $PAGES; do
	f="$P/share/man/man1/$p"
	w=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
	eq "man $p: groff -man -ww: no warning" "" "$w"
	w=$(man --warnings -l "$f" 2>&1 >/dev/null)
	eq "man $p: man --warnings: no warning" "" "$w"
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES OVERHEAD EXAMPLES "SEE ALSO"; do
		eq "man $p: section $s" 1 "$(grep -c "^\.SH \"\?$s\"\?\$" "$f")"
	done
done
eq "man -w finds the installed pages through MANPATH" "$P/share/man/man1/iostrata-run.1" "$(man -w iostrata-run)"
# one page per command of `iostrata help` (and kernel maps), each named in iostrata(1)
for c in $("$P/bin/iostrata" help | awk '/^  [a-z]/ {print $1}') kernel-maps; do
	eq "man page of '$c' installed" 1 "$(ls "$P/share/man/man1/iostrata-$c.1" 2>/dev/null | wc -l)"
	eq "iostrata(1) names iostrata-$c(1)" 1 "$(grep -c "^\.BR iostrata\\\\-${c//-/\\\\-} (1)" "$P/share/man/man1/iostrata.1" | grep -c '^[1-9]')"
done
# each page's synopsis has every option of the synopsis --help prints (its lines up to the first
# one indented by two spaces), and no other
opts_help() { "$P/bin/iostrata" "$@" --help | awk '/^  [^ ]/ {exit} {print}' | grep -oE -- '(\[|\| )--?[a-zA-Z][-a-zA-Z0-9]*' | sed 's/^[[ |]*//' | sort -u | xargs; }
opts_man() { man "$1" 2>/dev/null | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | grep -oE -- '(\[|\| )--?[a-zA-Z][-a-zA-Z0-9]*' | sed 's/^[[ |]*//' | sort -u | xargs; }
for c in run report dump top timeline kernel mount recover unpack; do
	eq "iostrata $c --help: a synopsis with options" 1 "$(opts_help "$c" | grep -c -- '-')"
	eq "man iostrata-$c: the synopsis's options are --help's" "$(opts_help "$c")" "$(opts_man "iostrata-$c")"
done
eq "man iostrata-kernel-maps: the synopsis's options are --help's" "$(opts_help kernel maps)" "$(opts_man iostrata-kernel-maps)"

# --- bash completion ----------------------------------------------------------------------------
# complete WORDS...: what the installed completion offers for the last word
complete_words() {
	env -i HOME="$T" PATH="$P/bin:/usr/bin:/bin" bash --norc --noprofile -c '
		source "$1/share/bash-completion/completions/iostrata" || exit 3
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_iostrata
		echo "${COMPREPLY[*]}"' _ "$P" "$@"
}
eq "completion: loads, registers _iostrata for iostrata" "complete -F _iostrata iostrata" \
	"$(env -i PATH=/usr/bin:/bin bash --norc -c "source '$P/share/bash-completion/completions/iostrata' && complete -p iostrata")"
eq "completion: iostrata rep<TAB>" report "$(complete_words iostrata rep)"
eq "completion: iostrata u<TAB>" "umount unpack" "$(complete_words iostrata u)"
eq "completion: iostrata report --t<TAB>" --top "$(complete_words iostrata report --t)"
eq "completion: iostrata kernel m<TAB>" maps "$(complete_words iostrata kernel m)"
eq "completion: iostrata kernel --layers syscall,p<TAB>" syscall,pagecache "$(complete_words iostrata kernel --layers syscall,p)"
eq "completion: iostrata help ti<TAB>" timeline "$(complete_words iostrata help ti)"
mkdir -p "$T/cdir/sub"
eq "completion: iostrata run -o DIR completes directories" "$T/cdir/sub" "$(complete_words iostrata run -o "$T/cdir/s")"
eq "completion: iostrata run -- CMD completes commands" 1 "$(complete_words iostrata run -q -- trunca | grep -cw truncate)"
eq "completion: iostrata top -<TAB>: top's options" "--help --files --json -b -d -n" "$(complete_words iostrata top -)"

# --- uninstall ----------------------------------------------------------------------------------
"${MK[@]}" uninstall PREFIX="$P" >"$T/uninst.out" 2>&1
eq "make uninstall PREFIX: exit 0, no file left, no lib/iostrata" "0 0 0" \
	"$? $(find "$P" -type f -o -type l | wc -l) $(ls -d "$P/lib/iostrata" 2>/dev/null | wc -l)"

"${MK[@]}" install DESTDIR="$T/stage" PREFIX=/usr >"$T/inst.out" 2>&1
eq "make install DESTDIR=STAGE PREFIX=/usr: exactly the files, under STAGE" "0 $(expected "$T/stage/usr" "$T/stage/etc" | xargs)" \
	"$? $(find "$T/stage" -type f | sort | xargs)"
"${MK[@]}" uninstall DESTDIR="$T/stage" PREFIX=/usr >"$T/uninst.out" 2>&1
eq "make uninstall DESTDIR=STAGE PREFIX=/usr: nothing left" "0 0" "$? $(find "$T/stage" -type f | wc -l)"

# --- a tarball without .git: it builds and names no revision ------------------------------------
if [ -e "$ROOT/.git" ]; then
	mkdir -p "$T/tarball"
	(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$T/tarball"
	eq "tarball: no .git" 0 "$(ls -a "$T/tarball" | grep -c '^\.git$')"
	eq "tarball: make version is VERSION alone" "$VERSION" \
		"$(make -s -C "$T/tarball" --no-print-directory version)"
	make -s -C "$T/tarball" -j2 build/iostrata >"$T/tarball.out" 2>&1
	eq "tarball: builds the CLI" "0" "$?"
	eq "tarball: its --version names no revision" "iostrata $VERSION" \
		"$("$T/tarball/build/iostrata" --version)"
else
	eq "not a checkout: --version names no revision" 0 "$("$IOSTRATA" --version | grep -c '(git')"
fi
