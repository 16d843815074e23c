# ---------------------------------------------------------------------------------------------
# ecnlab crosscheck: connection machinery and records (the same text in every generated script)
#
# A connection is a pair of FullTcp agents: the client's on a client node (or on a bulk flow's
# leaf node), the server's on a server node, each with an EcnlabApp that counts the bytes its
# FullTcp delivers in order. Exchanges: the client writes its request, the server answers once
# the whole request has arrived (after the exchange's server delay), the client reads the whole
# response, thinks, and writes the next request; after the last response the client closes and
# the server's FullTcp closes when it has the FIN and all its data is acknowledged
# (halfclose_ false). Actions taken inside a FullTcp upcall are deferred by a zero-delay event,
# so no agent is driven (or deleted) from inside its own receive path.
#
# Records (one line each, space separated, NaN for an unknown time):
#   flows.txt      cid workload kind client server start end completed rwnd_pkts
#                  c_sent c_retx c_rtos c_ecn c_cuts s_sent s_retx s_rtos s_ecn s_cuts
#                  c_delivered s_delivered c_goodput s_goodput exchanges
#                  (c_: the client's FullTcp, s_: the server's; sent/retx in payload bytes,
#                  rtos = nrexmit_, ecn = necnresponses_, cuts = ncwndcuts_; delivered: bytes
#                  the end's application received in the whole run, goodput: in the window)
#   exchanges.txt  cid workload seq client server start end request_bytes response_bytes
# ---------------------------------------------------------------------------------------------

set ecnlab_flows [open flows.txt w]
set ecnlab_exchanges [open exchanges.txt w]
array set ecnlab_open_conns {}

Class EcnlabApp -superclass Application

# A count-only script (ecnlab_count_only 1, for timing ns-2) defines no recv: an Application
# whose class has no recv instproc when it starts makes no Tcl call per delivery (app.cc).
if {!$ecnlab_count_only} {
	EcnlabApp instproc recv {bytes} {
		$self instvar cid side
		if {$cid} {
			ecnlab_recv $cid $side $bytes
		}
	}
}

# --- random draws: $u is a RandomVariable/Uniform on [0, 1) with its own RNG stream ----------
proc ecnlab_constant {u v} { return $v }
proc ecnlab_uniform {u lo hi} { return [expr {$lo + ($hi - $lo) * [$u value]}] }
proc ecnlab_exponential {u mean} { return [expr {-$mean * log(1.0 - [$u value])}] }
proc ecnlab_lomax {u s a h} {
	# truncated Lomax TL(s, a, H) by inversion, at least 1
	set c [expr {1.0 - pow(1.0 + $h / $s, -$a)}]
	set x [expr {$s * (pow(1.0 - [$u value] * $c, -1.0 / $a) - 1.0)}]
	return [expr {$x < 1.0 ? 1.0 : $x}]
}
proc ecnlab_pareto {u mean shape} {
	# Pareto with that mean (ns-2's Pareto): k U^(-1/shape), k = mean (shape - 1) / shape
	set k [expr {$mean * ($shape - 1.0) / $shape}]
	return [expr {$k * pow(1.0 - [$u value], -1.0 / $shape)}]
}
proc ecnlab_bounded_pareto {u lo hi a} {
	set c [expr {1.0 - pow($lo / $hi, $a)}]
	return [expr {$lo * pow(1.0 - [$u value] * $c, -1.0 / $a)}]
}
proc ecnlab_discrete {u values cumulative} {
	# cumulative: running sums of the weights, divided by their total
	set x [$u value]
	foreach v $values c $cumulative {
		if {$x < $c} { return $v }
	}
	return [lindex $values end]
}
proc ecnlab_mixture {u cumulative parts} {
	# parts: Tcl commands, one per part, each drawing from its own distribution
	set x [$u value]
	foreach p $parts c $cumulative {
		if {$x < $c} { return [eval $p] }
	}
	return [eval [lindex $parts end]]
}
proc ecnlab_bytes {x} {
	# a size in whole bytes, rounded up, at least 1
	set b [expr {int(ceil($x))}]
	return [expr {$b < 1 ? 1 : $b}]
}
proc ecnlab_count {x} {
	# a count: rounded to the nearest integer, at least 1
	set n [expr {int(round($x))}]
	return [expr {$n < 1 ? 1 : $n}]
}
proc ecnlab_count_up {x} {
	# a count: rounded up, at least 1
	set n [expr {int(ceil($x))}]
	return [expr {$n < 1 ? 1 : $n}]
}
proc ecnlab_window {rwnd_bytes mss} {
	# FullTcp's window_ is in segments: the whole segments that fit in the receiver window
	set w [expr {int($rwnd_bytes / $mss)}]
	return [expr {$w < 1 ? 1 : $w}]
}

# --- connections ------------------------------------------------------------------------------

# Agents are reused where that is safe: creating an ns-2 agent is slow (every bound variable
# is initialized through Tcl), and a run opens many connections. A closed connection's listener
# (the server of an exchange) is detached and kept with its application, by class, ECN setting
# and role, and the next connection that needs one reconfigures it with its TCP settings (the
# profile procs take an agent to configure) and resets it. Two things keep an agent from
# changing roles or serving as an ECN-capable opener again: a listener sends PT_ACK packets for
# ever (FullTcp's listen() sets type_, which nothing resets, and DelayBox finds a connection's
# SYN by the PT_TCP type), and FullTcp's reset() keeps recent_ce_ and cong_action_ (not bound to
# Tcl), so an opener that last received CE-marked data would echo ECE on its next connection's
# handshake ACK. Openers of ECN-capable connections are therefore new agents; a listener's stale
# echo could only slow its client's requests. After both ends of a connection have closed no
# packet of it is left in the network.

proc ecnlab_agent {make role node} {
	global ns ecnlab_pool ecnlab_key
	set key $ecnlab_key($make),$role
	if {[info exists ecnlab_pool($key)] && [llength $ecnlab_pool($key)] > 0} {
		set pair [lindex $ecnlab_pool($key) end]
		set ecnlab_pool($key) [lreplace $ecnlab_pool($key) end end]
		foreach {a app} $pair {}
		$make $a
	} else {
		set a [$make]
		set app [new EcnlabApp]
		$app attach-agent $a
		$app set cid 0
		$app start
	}
	# FullTcp computes ssthresh_ (from window_) and its initial window at reset(), which a new
	# agent ran with the class defaults before the profile set its own values
	$a reset
	$ns attach-agent $node $a
	return [list $a $app]
}

proc ecnlab_release {make role node agent app} {
	global ns ecnlab_pool ecnlab_key
	$app set cid 0
	$ns detach-agent $node $agent
	if {$role == "listener" || [string match *,0 $ecnlab_key($make)]} {
		lappend ecnlab_pool($ecnlab_key($make),$role) [list $agent $app]
	} else {
		delete $app
		delete $agent
	}
}

# The fields of a connection's record in the global array C (C($cid,field)).
set ecnlab_fields {wl kind client server cnode snode make_c make_s ct st app_c app_s window
	start done_c done_s got_c got_s good_c good_s nex exchanges cnt_c cnt_s on_done cur scur
	req_end resp_end ex_start role_c role_s}

# Sets up connection $cid. make_c, make_s: commands returning a configured FullTcp agent for
# the client and the server end.
proc ecnlab_connection {cid wl kind client server cnode snode make_c make_s window role_c role_s} {
	global ns C ecnlab_open_conns
	foreach {ct app_c} [ecnlab_agent $make_c $role_c $cnode] {}
	foreach {st app_s} [ecnlab_agent $make_s $role_s $snode] {}
	foreach a [list $ct $st] {
		$a set fid_ $cid
		$a set window_ $window
	}
	$ns connect $ct $st
	foreach {a app side} [list $ct $app_c c $st $app_s s] {
		$app set cid $cid
		$app set side $side
		$a proc done {} "ecnlab_done $cid $side"
	}
	array set C [list $cid,wl $wl $cid,kind $kind $cid,client $client $cid,server $server \
		$cid,cnode $cnode $cid,snode $snode $cid,make_c $make_c $cid,make_s $make_s \
		$cid,ct $ct $cid,st $st $cid,app_c $app_c $cid,app_s $app_s $cid,window $window \
		$cid,start [$ns now] $cid,done_c 0 $cid,done_s 0 $cid,got_c 0 $cid,got_s 0 \
		$cid,good_c 0 $cid,good_s 0 $cid,nex 0 $cid,exchanges {} \
		$cid,cnt_c {0 0 0 0 0} $cid,cnt_s {0 0 0 0 0} $cid,on_done {} $cid,cur 0 \
		$cid,scur 0 $cid,req_end 0 $cid,resp_end 0 $cid,ex_start NaN \
		$cid,role_c $role_c $cid,role_s $role_s]
	set ecnlab_open_conns($cid) 1
}

# A long-lived (bytes < 0) or finite bulk transfer; dir "down": the server sends. The sender
# opens the connection (FullTcp's listener gets no upcall when it becomes established, so the
# sending end must be the active opener, as in ns-2's own scripts).
proc ecnlab_bulk {cid wl client server cnode snode make_c make_s window dir bytes} {
	global C
	if {$dir == "down"} {
		set roles {listener opener}
	} else {
		set roles {opener listener}
	}
	ecnlab_connection $cid $wl bulk $client $server $cnode $snode $make_c $make_s $window \
		{*}$roles
	if {$dir == "down"} {
		set sender $C($cid,st)
		set receiver $C($cid,ct)
	} else {
		set sender $C($cid,ct)
		set receiver $C($cid,st)
	}
	$receiver listen
	if {$bytes < 0} {
		$sender sendmsg -1 NONE
	} else {
		$sender sendmsg $bytes MSG_EOF
	}
}

# A connection carrying request/response exchanges: a list of
# {request_bytes response_bytes server_delay_s think_s}. on_done: a command run once when the
# last response has arrived (the web model's object completion), or "".
proc ecnlab_exchanges {cid wl client server cnode snode make_c make_s window exchanges on_done} {
	global C
	ecnlab_connection $cid $wl exchanges $client $server $cnode $snode $make_c $make_s $window \
		opener listener
	set C($cid,exchanges) $exchanges
	set C($cid,on_done) $on_done
	set C($cid,cur) 0
	set C($cid,scur) 0
	set first [lindex $exchanges 0]
	set C($cid,req_end) [lindex $first 0]
	set C($cid,resp_end) [lindex $first 1]
	set C($cid,ex_start) $C($cid,start)
	$C($cid,st) listen
	$C($cid,ct) advance-bytes [lindex $first 0]
}

proc ecnlab_recv {cid side bytes} {
	global ns C ecnlab_warmup
	set now [$ns now]
	incr C($cid,got_$side) $bytes
	if {$now >= $ecnlab_warmup} {
		incr C($cid,good_$side) $bytes
	}
	if {$C($cid,kind) != "exchanges"} {
		return
	}
	set ex $C($cid,exchanges)
	set n [llength $ex]
	if {$side == "s"} {
		# the server answers every request that has arrived in full
		while {$C($cid,scur) < $n && $C($cid,got_s) >= $C($cid,req_end)} {
			set e [lindex $ex $C($cid,scur)]
			incr C($cid,scur)
			if {$C($cid,scur) < $n} {
				incr C($cid,req_end) [lindex [lindex $ex $C($cid,scur)] 0]
			}
			$ns at [expr {$now + [lindex $e 2]}] "$C($cid,st) advance-bytes [lindex $e 1]"
		}
		return
	}
	while {$C($cid,cur) < $n && $C($cid,got_c) >= $C($cid,resp_end)} {
		set e [lindex $ex $C($cid,cur)]
		ecnlab_exchange_record $cid $C($cid,cur) $C($cid,ex_start) $now \
			[lindex $e 0] [lindex $e 1]
		incr C($cid,nex)
		incr C($cid,cur)
		if {$C($cid,cur) < $n} {
			set next [lindex $ex $C($cid,cur)]
			incr C($cid,resp_end) [lindex $next 1]
			set t [expr {$now + [lindex $e 3]}]
			set C($cid,ex_start) $t
			$ns at $t "$C($cid,ct) advance-bytes [lindex $next 0]"
		} else {
			set C($cid,ex_start) NaN
			$ns at $now "$C($cid,ct) close"
			if {$C($cid,on_done) != ""} {
				$ns at $now $C($cid,on_done)
			}
		}
	}
}

proc ecnlab_exchange_record {cid seq start end req resp} {
	global C ecnlab_exchanges
	puts $ecnlab_exchanges "$cid $C($cid,wl) $seq $C($cid,client) $C($cid,server) $start $end $req $resp"
}

proc ecnlab_counters {agent} {
	return [list [$agent set ndatabytes_] [$agent set nrexmitbytes_] [$agent set nrexmit_] \
		[$agent set necnresponses_] [$agent set ncwndcuts_]]
}

# FullTcp calls "done" when its end reaches CLOSED (the server's reset() follows at once, so
# its counters are read here).
proc ecnlab_done {cid side} {
	global ns C
	if {$C($cid,done_$side)} {
		return
	}
	set C($cid,done_$side) 1
	set C($cid,cnt_$side) [ecnlab_counters $C($cid,${side}t)]
	if {$C($cid,done_c) && $C($cid,done_s)} {
		$ns at [$ns now] "ecnlab_close $cid [$ns now] 1"
	}
}

# Writes the flow record of $cid and, once both ends are closed, returns its agents to the pool.
proc ecnlab_close {cid end completed} {
	global ns C ecnlab_flows ecnlab_open_conns ecnlab_fields
	foreach side {c s} {
		if {!$C($cid,done_$side)} {
			set C($cid,cnt_$side) [ecnlab_counters $C($cid,${side}t)]
		}
	}
	puts $ecnlab_flows [concat $cid $C($cid,wl) $C($cid,kind) $C($cid,client) $C($cid,server) \
		$C($cid,start) $end $completed $C($cid,window) $C($cid,cnt_c) $C($cid,cnt_s) \
		$C($cid,got_c) $C($cid,got_s) $C($cid,good_c) $C($cid,good_s) $C($cid,nex)]
	if {$completed} {
		ecnlab_release $C($cid,make_c) $C($cid,role_c) $C($cid,cnode) $C($cid,ct) $C($cid,app_c)
		ecnlab_release $C($cid,make_s) $C($cid,role_s) $C($cid,snode) $C($cid,st) $C($cid,app_s)
		unset ecnlab_open_conns($cid)
		foreach f $ecnlab_fields {
			unset C($cid,$f)
		}
	}
}

# End of the run: records the connections still open and their unfinished exchanges.
proc ecnlab_finish {} {
	global ns C ecnlab_open_conns ecnlab_flows ecnlab_exchanges
	foreach cid [lsort -integer [array names ecnlab_open_conns]] {
		if {$C($cid,kind) == "exchanges" && $C($cid,ex_start) != "NaN" \
				&& $C($cid,ex_start) <= [$ns now]} {
			set e [lindex $C($cid,exchanges) $C($cid,cur)]
			ecnlab_exchange_record $cid $C($cid,cur) $C($cid,ex_start) NaN \
				[lindex $e 0] [lindex $e 1]
		}
		ecnlab_close $cid NaN 0
	}
	close $ecnlab_flows
	close $ecnlab_exchanges
}

# tclcl looks up the class default of every bound variable of a new agent by trying
# "$class set var" up the class hierarchy under catch (SplitObject init-instvar), which makes
# an agent cost milliseconds. The same lookup, remembering which class holds each default (the
# value itself is still read at every creation): installed after the script's last class
# default, so the answer cannot change.
proc ecnlab_fast_instvars {} {
	SplitObject instproc init-instvar var {
		global ecnlab_owner
		set key [$self info class],$var
		if {![info exists ecnlab_owner($key)]} {
			set owner ""
			set cl [$self info class]
			while {$cl != "" && $cl != "SplitObject" && $owner == ""} {
				foreach c $cl {
					if {![catch {$c set $var}]} {
						set owner $c
						break
					}
				}
				set parents ""
				foreach c $cl {
					if {$cl != "SplitObject" && $cl != "Object"} {
						set parents "$parents [$c info superclass]"
					}
				}
				set cl $parents
			}
			set ecnlab_owner($key) $owner
		}
		set owner $ecnlab_owner($key)
		if {$owner == ""} {
			$self warn-instvar [$self info class]::$var
			return
		}
		$self set $var [$owner set $var]
	}
}
