# docs/models/analytic.md, "A timeout cycle at shallow buffers": the one-flow buffer scenario
# (validate.one_flow_scenario) in ns-2.35. Prints utilisation and timeouts over 40-120 s.
# One flow, 10 Mb/s, RTT 100 ms, DropTail of $B packets; ns-2.35 NewReno, one-way or FullTcp.
# usage: ns oneflow.tcl KIND B [trace]   KIND: oneway | full
set kind [lindex $argv 0]
set B [lindex $argv 1]
set tr [expr {[llength $argv] > 2}]
set ns [new Simulator]
set s [$ns node]; set r1 [$ns node]; set r2 [$ns node]; set d [$ns node]
$ns duplex-link $s $r1 1000Mb 0ms DropTail
$ns duplex-link $r1 $r2 10Mb 50ms DropTail
$ns duplex-link $r2 $d 1000Mb 0ms DropTail
$ns queue-limit $r1 $r2 $B
$ns queue-limit $r2 $r1 1000
Agent/TCP set window_ 100000
Agent/TCP set packetSize_ 1460
Agent/TCP set minrto_ 1
Agent/TCP set tcpTick_ 0.001
Agent/TCP set windowInit_ 3
Agent/TCP set maxburst_ 0
if {$kind == "oneway"} {
  set tcp [new Agent/TCP/Newreno]
  set sink [new Agent/TCPSink/DelAck]
  Agent/TCPSink/DelAck set interval_ 200ms
  $ns attach-agent $s $tcp; $ns attach-agent $d $sink
  $ns connect $tcp $sink
  set src [new Application/FTP]; $src attach-agent $tcp
} else {
  Agent/TCP/FullTcp set segsize_ 1460
  Agent/TCP/FullTcp set segsperack_ 2
  Agent/TCP/FullTcp set interval_ 0.2
  set tcp [new Agent/TCP/FullTcp/Newreno]
  set sink [new Agent/TCP/FullTcp/Newreno]
  $ns attach-agent $s $tcp; $ns attach-agent $d $sink
  $ns connect $tcp $sink
  $sink listen
  set src [new Application/FTP]; $src attach-agent $tcp
}
$ns at 0.0 "$src start"
set last_to 0
proc sample {} {
  global ns tcp tr
  set t [$ns now]
  if {$tr} { puts [format "%.2f cwnd=%.1f ssthresh=%d ack=%d nrexmit=%d" $t [$tcp set cwnd_] [$tcp set ssthresh_] [$tcp set ack_] [$tcp set nrexmit_]] }
  $ns at [expr $t + 0.1] "sample"
}
set a40 0
proc mark40 {} { global tcp a40 t40; set a40 [$tcp set ack_]; set t40 [$tcp set nrexmit_] }
proc done {} {
  global tcp a40 t40 B kind
  set a [$tcp set ack_]
  # ack_ counts packets in the one-way agent, bytes in FullTcp
  set pkts [expr {$kind == "oneway" ? ($a - $a40) : ($a - $a40) / 1460.0}]
  set util [expr $pkts * 1500.0 * 8 / 80.0 / 1e7]
  puts [format "%s B=%d util(40-120s)=%.3f timeouts(40-120s)=%d" $kind $B $util [expr [$tcp set nrexmit_] - $t40]]
  exit 0
}
$ns at 0.0 "sample"
$ns at 40.0 "mark40"
$ns at 120.0 "done"
$ns run
