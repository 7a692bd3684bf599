#!/usr/bin/env bash
# `iostrata mount --background` lets go of its caller's descriptors once the mount serves, as a
# daemon does: `iostrata mount --background SRC MNT | cat` ends (it never did: the monitor held
# the pipe open until it was unmounted), the monitor's stdin, stdout and stderr are /dev/null and
# it leads its own session; the mount still serves, and `iostrata umount` makes it write its log
# with the exact counts of what went through it. Root (CI); see lib_mount.sh.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_mount.sh"
mount_ready || exit 0
mount_workspace
printf 'hello\n' >"$SRC/f"

# `timeout` ends the pipeline if it hangs: 124 then; pipefail: the mount's status, not cat's
timeout 20 bash -o pipefail -c "'$IOSTRATA' mount -o '$T/logs' --background '$SRC' '$MNT' | cat" >"$T/out" 2>"$T/err"
eq "mount --background | cat: returns, exit 0" 0 $?
eq "mount --background: it serves" 1 "$(mounted "$MNT")"
P=$(monitor_pid "$MNT")
eq "mount --background: one line on stderr naming the monitor" \
	"iostrata mount: $SRC on $MNT, monitor pid $P (iostrata umount $MNT)" "$(cat "$T/err")"
eq "mount --background: nothing on stdout" 0 "$(wc -c <"$T/out")"
eq "monitor: stdin, stdout, stderr are /dev/null" "/dev/null /dev/null /dev/null" \
	"$(readlink /proc/"$P"/fd/0) $(readlink /proc/"$P"/fd/1) $(readlink /proc/"$P"/fd/2)"
eq "monitor: leads its own session" "$P" "$(ps -o sid= -p "$P" | tr -d ' ')"
eq "monitor: no controlling terminal" "?" "$(ps -o tty= -p "$P" | tr -d ' ')"

# the mount still serves after its caller is gone: a read and a write through it
eq "read through the detached monitor" hello "$(cat "$MNT/f")"
head -c 12288 /dev/zero >"$MNT/g"
eq "write through the detached monitor lands on SRC" 12288 "$(stat -c %s "$SRC/g")"

"$IOSTRATA" umount "$MNT" >"$T/uout" 2>&1
eq "umount: exit 0, one line" "0 unmounted $MNT" "$? $(cat "$T/uout")"
for i in $(seq 200); do
	kill -0 "$P" 2>/dev/null || break
	sleep 0.1
done
eq "monitor: exits after the umount" 1 "$(kill -0 "$P" 2>/dev/null && echo 0 || echo 1)"
L=$(ls "$T/logs"/mount-*.iost 2>/dev/null)
eq "monitor: one final log" 1 "$(echo "$L" | grep -c .)"
eq "log: the read and the write through the mount" "6 12288" \
	"$(mcount "$L" "$MNT/f" bytes_read) $(mcount "$L" "$MNT/g" bytes_written)"

# a failure before the mount serves still reaches the caller's stderr, and nothing detaches
timeout 20 bash -o pipefail -c "'$IOSTRATA' mount -o '$T/logs' --background '$SRC' '$T/nomnt' | cat" >"$T/out" 2>"$T/err"
eq "mount --background on a missing MNT: exit 2, one line naming it" "2 1 1" \
	"$? $(wc -l <"$T/err") $(grep -c "$T/nomnt" "$T/err")"
