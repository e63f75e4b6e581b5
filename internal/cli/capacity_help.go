package cli

// capacityLong is phptune capacity's --help text.
const capacityLong = `phptune capacity loads a lab in the open model (requests sent at a fixed rate
whatever the server does; latency counted from each request's intended send
time, so queueing is not hidden) and finds the highest rate at which the SLO
holds: the latency percentiles within their bounds and the error rate within
--max-errors (requests never sent for lack of a free connection, or still
unanswered at the end, count as errors).

The search: a closed-model probe (--probe-connections, 5 s) gives a first rate,
half its throughput, unless --start-rate is given; rates then go up by
--growth while the SLO holds (down from a failing first rate) until a pass and
a failure bracket the capacity, then bisect until the failing rate is within
--tolerance of the passing one. Both ends are measured again at the end (the
drift check): a machine that slowed down, or a step that passed by luck,
fails again; a step spoiled by a neighbour passes. Each rate's verdict is the
majority of its runs (a tie gets a third), and a step that fails under more
than 10% CPU steal is run again at once.

Each step is a warm-up at its rate (2 × the SLO's bound, 2-10 s) and a measured
part of 10 × the bound (5-60 s, longer at low rates so that at least 5
requests lie beyond the percentile): at a rate 10% above capacity the queue
grows by 0.1 s of work per second, so by the end of such a step the newest
requests wait a whole bound longer than at capacity and the step fails.
--step and --step-warmup override the rule. After a failing step the lab
idles 2 × the bound (at least 2 s) so that its queues drain.

It prints the capacity with its uncertainty (the highest passing and the
lowest failing rate) and the latency-against-rate table; the result is stored
like bench results (phptune report RUN) and the HTML report charts the curve.

--slo grammar: ` + sloHelp + `.

The lab is one of its own for --app or --docroot (taken down at the end;
--knobs and --set configure it) or a lab you run (--lab; not restarted).
--site NAME|DIR measures a sealed lab of its own of a site of this host (as
lab up --site makes it), started from the site's live configuration, with
the site's own Host.

--engine locust runs every step (and the probe) on Locust instead of
phptune's generator (phptune setup --with-locust; --workers N: its master
with N workers on this machine), each user keeping its share of the rate
(Locust's constant_throughput); a step's warm-up is a throwaway Locust run.
Locust does not correct coordinated omission: a user waits for its answer
before its next request, so latency counts from the send, not from when
the request was due, and a slow server lowers the rate sent instead. The
output and the record say so, and each step shows the achieved rate against
the asked one (a step short by more than 10% fails). HTTP only (not a sealed
--site lab). See docs/locust.md.`

// capacityExample is phptune capacity's examples.
const capacityExample = `  phptune capacity --app hello
  phptune capacity --app io --slo 'p99<1s' --knobs recommended.knobs
  phptune capacity --lab mylab --workload /shop/ --slo 'p95<300ms,errors<0.1%'
  phptune capacity --app wordpress --slo 'p99<2s' --time-budget 10m --json
  phptune capacity --app io --engine locust --workers 2 --slo 'p99<500ms'`
