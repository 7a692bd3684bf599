#!/usr/bin/env bash
# exec: each process image has its own log. A program that execs itself 3 times leaves 4 logs
# with one pid, each with exactly its one 2-byte O_APPEND write (at 0, 2, 4, 6: the appends start
# at the size the file had when opened); vfork + exec and posix_spawn give the child's program a
# log of its own; `sh -c 'prog1; prog2'` gives logs for the shell and both programs.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog exec_chain sys_static

flags() { jq -c .header.flag_names "$(json "$1")"; }
fin='["finished","stdio_syscalls"]' fin_exec='["finished","exec","stdio_syscalls","exec_kept"]'

# ---- a chain of 3 execs: images N = 3, 2, 1, 0 ----
f="$T/chain.txt"
cap_run "exec chain" "$T/chain" "$PROGS/exec_chain" 3 "$f" || exit 0
eq "exec chain: what the images wrote" "3 2 1 0" "$(paste -sd' ' "$f")"
eq "exec chain: 4 logs" 4 "$(ls "$T/chain"/*.iost | wc -l)"
pid=
for n in 3 2 1 0; do
	log=$(log_of "$T/chain" exec_chain "$n")
	[ -f "$log" ] || { fail "exec chain: log of image $n" "$log"; continue; }
	pid=${pid:-$(hdr "$log" pid)}
	eq "exec chain image $n: same pid as the first image" "$pid" "$(hdr "$log" pid)"
	if [ "$n" -gt 0 ]; then
		eq "exec chain image $n: ended in exec" "-1 $fin_exec" "$(hdr "$log" exit_status) $(flags "$log")"
	else
		eq "exec chain image $n: ended in exit 0" "0 $fin" "$(hdr "$log" exit_status) $(flags "$log")"
	fi
	end=$((2 * (4 - n)))
	unaligned=$([ "$n" = 3 ] && echo 0 || echo 1)
	expect "exec chain image $n" "$log" posix "$f" "opens=1 closes=1 writes=1 bytes_written=2
		max_write_end=$end file_not_aligned=$unaligned write_hist=2:1 sizes=2:1"
done

# ---- vfork + exec: parent writes [0,2), the child's program [2,4), the parent [4,6) ----
# vfork is fork here; the child image before its exec did no I/O, so it leaves no log and the
# program's log says it was exec'd by such a child (flag forked_exec, fork_start_ns).
f="$T/vfork.txt"
cap_run "vfork" "$T/vfork" "$PROGS/exec_chain" vfork "$f" || exit 0
eq "vfork: what was written" "v 0 w" "$(paste -sd' ' "$f")"
eq "vfork: 2 logs" 2 "$(ls "$T/vfork"/*.iost | wc -l)"
child_prog= parent=
for log in $(logs "$T/vfork"); do
	argv1=$(jq -r '.header.argv[1]' "$(json "$log")")
	if [ "$argv1" = 0 ]; then
		child_prog=$log
	else
		parent=$log
	fi
done
if [ -z "$child_prog" ] || [ -z "$parent" ]; then
	fail "vfork: parent, child's program" "not both logs found"
else
	eq "vfork: child's parent" "$(hdr "$parent" pid)" "$(hdr "$child_prog" ppid)"
	eq "vfork: child's program was exec'd by a forked child without a log" \
		'["finished","stdio_syscalls","forked_exec"]' "$(flags "$child_prog")"
	fs=$(hdr "$child_prog" fork_start_ns) ps=$(hdr "$parent" start_ns) cs=$(hdr "$child_prog" start_ns)
	eq "vfork: forked after the parent started, before the program started" yes \
		"$([ "$fs" -gt "$ps" ] && [ "$fs" -lt "$cs" ] && echo yes || echo "no: $ps $fs $cs")"
	expect "vfork parent" "$parent" posix "$f" "opens=2 closes=2 writes=2 bytes_written=4
		max_write_end=6 seq_writes=1 file_not_aligned=1 write_hist=2:2 sizes=2:2 strides=4:1"
	expect "vfork child's program" "$child_prog" posix "$f" "opens=1 closes=1 writes=1 bytes_written=2
		max_write_end=4 file_not_aligned=1 write_hist=2:1 sizes=2:1"
fi

# ---- posix_spawn: no fork in our sight, so 2 logs ----
f="$T/spawn.txt"
cap_run "spawn" "$T/spawn" "$PROGS/exec_chain" spawn "$f" || exit 0
eq "spawn: what was written" "s 0 t" "$(paste -sd' ' "$f")"
eq "spawn: 2 logs" 2 "$(ls "$T/spawn"/*.iost | wc -l)"
parent=$(log_of "$T/spawn" exec_chain spawn) child=$(log_of "$T/spawn" exec_chain 0)
if [ -f "$parent" ] && [ -f "$child" ]; then
	eq "spawn: child's parent" "$(hdr "$parent" pid)" "$(hdr "$child" ppid)"
	expect "spawn parent" "$parent" posix "$f" "opens=2 closes=2 writes=2 bytes_written=4
		max_write_end=6 seq_writes=1 file_not_aligned=1 write_hist=2:2 sizes=2:2 strides=4:1"
	expect "spawn child" "$child" posix "$f" "opens=1 closes=1 writes=1 bytes_written=2
		max_write_end=4 file_not_aligned=1 write_hist=2:1 sizes=2:1"
else
	fail "spawn: parent and child logs" "$parent / $child"
fi

# ---- sh -c 'prog1; prog2' ----
f1="$T/sh1.txt" f2="$T/sh2.txt"
cap_run "sh -c" "$T/sh" sh -c "'$PROGS/exec_chain' 0 '$f1'; '$PROGS/exec_chain' 0 '$f2'" || exit 0
progs=$(for l in $(logs "$T/sh"); do [ "$(basename "$(hdr "$l" exe)")" = exec_chain ] && echo "$l"; done)
eq "sh -c: two program logs" 2 "$(echo "$progs" | grep -c .)"
shells=$(for l in $(logs "$T/sh"); do [ "$(basename "$(hdr "$l" exe)")" = exec_chain ] || echo "$l"; done)
eq "sh -c: every other log is the shell's" "$(echo "$shells" | grep -c .)" \
	"$(for l in $shells; do basename "$(hdr "$l" exe)"; done | grep -c -x 'sh\|dash\|bash')"
top=$(for l in $shells; do [ "$(jq -r '.header.flag_names | index("exec")' "$(json "$l")")" = null ] && echo "$l"; done)
eq "sh -c: the shell's own log ended in exit 0" "1 0" "$(echo "$top" | grep -c .) $(hdr "$(echo "$top" | head -1)" exit_status)"
for l in $progs; do
	path=$(jq -r '.header.argv[2]' "$(json "$l")")
	expect "sh -c program $(basename "$path")" "$l" posix "$path" "opens=1 closes=1 writes=1 bytes_written=2
		max_write_end=2 write_hist=2:1 sizes=2:1"
	# the image the program replaced is the shell's fork, which ended in exec
	pre=$(for s in $shells; do [ "$(hdr "$s" pid)" = "$(hdr "$l" pid)" ] && echo "$s"; done)
	if [ -n "$pre" ]; then
		eq "sh -c program $(basename "$path"): the shell image before it ended in exec" "$fin_exec" "$(flags "$pre")"
	else
		eq "sh -c program $(basename "$path"): run by the shell" "$(hdr "$(echo "$top" | head -1)" pid)" "$(hdr "$l" ppid)"
	fi
done

# A static program leaves no log: run says so when it is the command, and the report says so when
# a dynamic image exec'd into one (its log ends in exec and no image of its pid follows).
mkdir -p "$T/st1" "$T/st2"
"$IOSTRATA" run -o "$T/stj1" -- "$PROGS/sys_static" "$T/st1" >/dev/null 2>"$T/st1.err"
eq "static command: exit status and one line naming it" "0 1" \
	"$? $(grep -c "^iostrata: $PROGS/sys_static is statically linked: the preload library cannot see its calls, so it wrote no log; run it with --kernel (root)" "$T/st1.err")"
"$IOSTRATA" run -q -o "$T/stj2" -- sh -c "exec $PROGS/sys_static $T/st2" >/dev/null 2>&1
eq "exec into a static program: run exit status" 0 $?
"$IOSTRATA" report --json "$T/stj2" >"$T/stj2.json"
shpid=$(jq -r '.processes[0].pid' "$T/stj2.json") shexe=$(basename "$(jq -r '.processes[0].exe' "$T/stj2.json")")
eq "exec into a static program: the warning names the shell" 1 \
	"$(jq -r --arg w "pid $shpid ($shexe) exec'd a program that left no log: a statically linked program" '[.warnings[] | select(startswith($w))] | length' "$T/stj2.json")"
# A shell's forked child that execs a static program: a child that counted nothing leaves no log
# when its exec'd program's log will say where it came from (logs_small.sh); a static program's
# will not, so the exec wrapper reads the target's ELF header and the child keeps its log.
mkdir -p "$T/st3"
"$IOSTRATA" run -q -o "$T/stj3" -- sh -c "$PROGS/sys_static $T/st3; true" >/dev/null 2>&1
eq "forked child execs a static program: run exit status" 0 $?
"$IOSTRATA" report --json "$T/stj3" >"$T/stj3.json"
eq "forked child execs a static program: 2 logs (the shell, its child ending in exec)" \
	"dash finished,exec,stdio_syscalls,exec_kept|dash finished,stdio_syscalls" \
	"$(jq -r '.processes[] | (.exe | split("/") | last) + " " + (.flag_names | join(","))' "$T/stj3.json" | sort | paste -sd'|' -)"
kid=$(jq -r '.processes[] | select(.flag_names | index("exec")) | "\(.pid) \(.ppid)"' "$T/stj3.json")
eq "forked child execs a static program: the child is the shell's" "$(jq -r '.processes[] | select((.flag_names | index("exec")) == null) | .pid' "$T/stj3.json")" "${kid#* }"
eq "forked child execs a static program: the warning names the child" 1 \
	"$(jq -r --arg w "pid ${kid% *} (dash) exec'd a program that left no log: a statically linked program" '[.warnings[] | select(startswith($w))] | length' "$T/stj3.json")"
"$IOSTRATA" report --json "$T/chain" >"$T/chain.json"
eq "an exec chain whose images all left logs: no such warning" 0 \
	"$(jq -r '[.warnings[] | select(contains("left no log"))] | length' "$T/chain.json")"
