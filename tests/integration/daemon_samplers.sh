#!/usr/bin/env bash
# tests/run: alone (a kernel session and the node's devices)
# iostratad's samplers of the node's own statistics on fixture trees in the real formats (this
# machine has no NFS, Lustre or NVMe: tests/fixtures/sys/README.md says where each format comes
# from; on a node that has them the same code reads /proc/self/mountstats, /proc/fs/lustre,
# /sys/kernel/debug/lustre and the controllers): after the first reading sets the base, known
# increments written into the files come back as exactly those differences, gauges come back as
# the fixtures' values, and a mount that appears later is a new metric without a restart (its
# counters count from 0: all it did came after the first reading).
source "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon samplers" "needs root (the daemon's default paths; the fixture copy is root's)"
	exit 0
fi
FX="$ROOT/tests/fixtures/sys"
mkdir -p "$T/store" "$T/smart" "$T/live"
cp "$FX/nfs/mountstats" "$T/mountstats"
cp -r "$FX/lustre" "$T/lustre"
cp -r "$FX/nvme/class" "$T/nvmeclass"
for c in nvme0 nvme1; do grep -v '^#' "$FX/nvme/smart-$c.hex" | xxd -r >"$T/smart/$c.bin"; done
cat >"$T/conf" <<C
store = sqlite:$T/store/store.db
socket = $T/sock
interval = 0.5
live_roots = $T/live
samplers = nfs lustre nvme
mountstats = $T/mountstats
lustre_root = $T/lustre/proc/fs/lustre
lustre_debug_root = $T/lustre/sys/kernel/debug/lustre
nvme_root = $T/nvmeclass/nvme
nvme_smart = $T/smart
C
"$B/iostratad" --config "$T/conf" --foreground 2>"$T/daemon.err" &
DPID=$!
trap 'kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; rm -rf "$T"' EXIT
sleep 1.3 # the base is read

# known increments, one interval apart
sed -i 's/^\tbytes:\t229311210301 /\tbytes:\t229311214397 /; s/^\t        READ: 218833 /\t        READ: 218836 /' "$T/mountstats"
OBD="$T/lustre/proc/fs/lustre/obdfilter/lustre-OST0000/stats"
sed -i 's/^read_bytes                512001 samples \[bytes\] 4096 4194304 1099511627776 /read_bytes                512003 samples [bytes] 4096 4194304 1099511635968 /' "$OBD"
OSC="$T/lustre/proc/fs/lustre/osc/lustre-OST0000-osc-ffff8b2c4e1f5000/rpc_stats"
sed -i 's/^1:\t\t       120 /1:\t\t       125 /' "$OSC"
LLITE=$(ls "$T"/lustre/sys/kernel/debug/lustre/llite/*/stats)
sed -i 's/^write_bytes               20987 samples /write_bytes               20990 samples /' "$LLITE"
printf '\xd7' | dd of="$T/smart/nvme0.bin" bs=1 seek=32 conv=notrunc status=none # data units read +5
sleep 1.3
# a mount that was not there: first its base, then a change
awk '/mounted on \/home /{p=1} p && /^device / && !/\/home /{p=0} p' "$T/mountstats" |
	sed 's|mounted on /home |mounted on /scratch |; s/^\tbytes:\t[0-9]* /\tbytes:\t5000 /' >"$T/scratch.block"
cat "$T/scratch.block" >>"$T/mountstats"
sleep 1.3
sed -i 's/^\tbytes:\t5000 /\tbytes:\t6000 /' "$T/mountstats"
sleep 1.3
kill "$DPID"; wait "$DPID" 2>/dev/null
q() { sqlite3 -batch "$T/store/store.db" "$1"; }
delta() { q "SELECT coalesce(sum(value), 0) FROM samples WHERE source = '$1' AND instance = '$2' AND metric = '$3' AND gauge = 0"; }
eq "nfs: bytes.normal_read grew by exactly 4096" 4096 "$(delta nfs /home bytes.normal_read)"
eq "nfs: op.READ.ops grew by exactly 3" 3 "$(delta nfs /home op.READ.ops)"
eq "nfs: an unchanged counter has no difference" 0 "$(delta nfs /home op.WRITE.ops)"
eq "lustre: obdfilter read_bytes count +2, sum +8192" "2 8192" \
	"$(delta lustre obdfilter/lustre-OST0000 read_bytes.count) $(delta lustre obdfilter/lustre-OST0000 read_bytes.sum)"
eq "lustre: osc pages per rpc 1, read +5" 5 "$(delta lustre osc/lustre-OST0000-osc-ffff8b2c4e1f5000 pages_per_rpc.1.read)"
eq "lustre: read RPCs in flight is a gauge of 2" 2 \
	"$(q "SELECT value FROM samples WHERE source='lustre' AND instance='osc/lustre-OST0000-osc-ffff8b2c4e1f5000' AND metric='read_RPCs_in_flight' AND gauge=1 ORDER BY t_ms DESC LIMIT 1")"
eq "lustre: llite (debugfs) write_bytes count +3" 3 "$(delta lustre "llite/$(basename "$(dirname "$LLITE")")" write_bytes.count)"
eq "nvme: data units read +5 (bytes +2,560,000)" "5 2560000" "$(delta nvme nvme0 data_units_read) $(delta nvme nvme0 bytes_read)"
eq "nvme: temperature 311 K, spare 100%, 3% used (gauges of nvme0's page)" "311 100 3" \
	"$(for m in temperature_k available_spare percent_used; do q "SELECT value FROM samples WHERE source='nvme' AND instance='nvme0' AND metric='$m' ORDER BY t_ms DESC LIMIT 1"; done | xargs)"
eq "nvme: the second controller too" yes "$([ "$(q "SELECT count(*) FROM samples WHERE instance='nvme1'")" -gt 0 ] && echo yes || echo no)"
eq "nfs: a mount that appeared later counts from 0 (5000, then +1000), without a restart" 6000 "$(delta nfs /scratch bytes.normal_read)"
eq "nothing said about the fixtures" "" "$(grep -v 'started\|stopped' "$T/daemon.err")"

# --- the kernel layer's pinned maps: `iostrata kernel --pin` on a gated dd of 100 x 4 KiB, then
# 1.5 s of 4 KiB O_DIRECT writes to a loop device of the test's own (over several of the block
# programs' sampling windows, 5 ms in every 320: docs/KERNEL.md "Depths") ---
mkfifo "$T/pin.gate"
truncate -s 16M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img")
trap 'kill "$DPID" "$DPID2" 2>/dev/null; wait "$DPID" "$DPID2" 2>/dev/null; losetup -d "$LOOP" 2>/dev/null; rm -rf "$T"' EXIT
(read -r _ <"$T/pin.gate"; exec bash -c "dd if=/dev/zero of=$T/pin.out bs=4k count=100 oflag=direct 2>/dev/null
	end=\$((\$(date +%s%N) + 1500000000))
	while [ \$(date +%s%N) -lt \$end ]; do dd if=/dev/zero of=$LOOP bs=4k count=1000 oflag=direct 2>/dev/null; done") &
DP=$!
PIN=/sys/fs/bpf/iostrata-dtest-$$
"$IOSTRATA" kernel --quiet --pid "$DP" --interval 0.2 --pin "$PIN" --ready "$T/pin.ready" &
KP=$!
wait_file "$T/pin.ready"
cat >"$T/kconf" <<C
store = sqlite:$T/store/k.db
socket = $T/ksock
interval = 0.5
live_roots = $T/live
samplers = kernel
kernel_pins = $PIN
dist_every = 1
C
# a second daemon on the same maps, one record every 1,000 requests of a device and class
sed 's|k\.db|k1000.db|; s|ksock|ksock1000|; s|dist_every = 1$|dist_every = 1000|' "$T/kconf" >"$T/kconf1000"
"$B/iostratad" --config "$T/kconf" --foreground 2>"$T/kdaemon.err" &
DPID=$!
"$B/iostratad" --config "$T/kconf1000" --foreground 2>"$T/kdaemon1000.err" &
DPID2=$!
sleep 1.2 # the base
LN=$(basename "$LOOP")
w0=$(awk '{print $5}' "/sys/block/$LN/stat")
echo go >"$T/pin.gate"
wait "$DP"
W=$(($(awk '{print $5}' "/sys/block/$LN/stat") - w0)) # the loop device's writes, as diskstats counts them
sleep 1.3
kill "$DPID" "$DPID2"; wait "$DPID" "$DPID2" 2>/dev/null
kill "$KP" 2>/dev/null; wait "$KP" 2>/dev/null
rm -rf "$PIN"
M=$(stat -c %m "$T")
FST=$(findmnt -n -o FSTYPE --target "$T")
eq "kernel maps: dd's 100 writes of 4 KiB, per (fs type, mount, op, size)" "100 409600" \
	"$(sqlite3 -batch "$T/store/k.db" "SELECT sum(CASE WHEN metric='write.4K-8K.count' THEN value END), sum(CASE WHEN metric='write.4K-8K.bytes' THEN value END) FROM samples WHERE source='kernel' AND instance='$FST $M'" | tr '|' ' ')"
dq() { sqlite3 -batch "$T/store/k.db" "$1"; }
eq "the loop device wrote for 1.5 s, 1,000 writes or more (diskstats: $W)" yes "$([ "$W" -ge 1000 ] && echo yes || echo no)"
# dist_every = 1: a record every interval that had a write; their requests are diskstats' own
eq "distributions: the loop device's writes, exactly diskstats' count" "$W" \
	"$(dq "SELECT coalesce(sum(requests), 0) FROM server_dists WHERE server = 'block $LN' AND op = 'write'")"
eq "distributions: some of them timed (begun in a window), no more than all" yes \
	"$(dq "SELECT CASE WHEN sum(timed) > 0 AND sum(timed) <= sum(requests) THEN 'yes' ELSE 'no' END FROM server_dists WHERE server = 'block $LN' AND op = 'write'")"
eq "distributions: no record timed more requests than it has" 0 \
	"$(dq "SELECT count(*) FROM server_dists WHERE timed > requests")"
bad=0
while IFS='|' read -r n w sv; do
	sw=$(echo "$w" | tr ',' '\n' | awk '{s += $1} END {print s + 0}')
	ss=$(echo "$sv" | tr ',' '\n' | awk '{s += $1} END {print s + 0}')
	[ "$sw" = "$n" ] && [ "$ss" = "$n" ] || bad=$((bad + 1))
done < <(dq "SELECT timed, wait_hist, service_hist FROM server_dists WHERE server = 'block $LN'")
eq "distributions: each record's wait and service histograms hold exactly its timed requests" 0 "$bad"
dq1000() { sqlite3 -batch "$T/store/k1000.db" "$1"; }
eq "distributions (dist_every 1,000): records of the loop device's writes, each of 1,000 requests or more" yes \
	"$(dq1000 "SELECT CASE WHEN count(*) >= 1 AND min(requests) >= 1000 THEN 'yes' ELSE 'no' END FROM server_dists WHERE server = 'block $LN' AND op = 'write'")"
eq "distributions (dist_every 1,000): diskstats' writes, the records' and what is not yet in one (< 1,000)" yes \
	"$(dq1000 "SELECT CASE WHEN sum(requests) <= $W AND $W - sum(requests) < 1000 THEN 'yes' ELSE 'no' END FROM server_dists WHERE server = 'block $LN' AND op = 'write'")"
eq "node --dists: the records, read back, with their requests and timed requests" \
	"$(dq "SELECT count(*), sum(requests), sum(timed) FROM server_dists" | tr '|' ' ')" \
	"$("$IOSTRATA" node --dists --json --store "sqlite:$T/store/k.db" | jq -r '.distributions | "\(length) \([.[].requests] | add) \([.[].timed] | add)"')"
eq "kernel maps: nothing lost" 0 \
	"$(sqlite3 -batch "$T/store/k.db" "SELECT coalesce(sum(value),0) FROM samples WHERE source='kernel' AND instance='kstats' AND metric IN ('event_drops','files_full','paths_full','agg_full')")"

"$IOSTRATA" node --samples all --json --store "sqlite:$T/store/store.db" >"$T/q.samples.json"
"$IOSTRATA" node --dists --json --store "sqlite:$T/store/k.db" >"$T/q.dists.json"
/usr/bin/python3 "$ROOT/tests/integration/tools/validate_json.py" "$ROOT/docs/query.schema.json" \
	"node --samples all --json" "$T/q.samples.json" "node --dists --json" "$T/q.dists.json"
out=$("$IOSTRATA" node --samples nvme --csv --store "sqlite:$T/store/store.db" | head -1)
eq "node --samples --csv: header" "t_ms,dt_ms,host,source,instance,metric,value,kind" "$out"
