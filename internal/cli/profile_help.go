package cli

// profileLong is phptune profile's --help text.
const profileLong = `phptune profile loads a lab with phptune's generator and samples it, in
rounds of three interleaved runs: plain; with perf sampling every CPU
(cpu-clock at --freq Hz, DWARF call graphs: Debian's PHP has no frame
pointers); with the excimer extension sampling PHP stacks in every
request (--php-clock cpu or wall). The two samplers never run together.

It prints the native samples by component (Zend VM executor, allocator,
strings/arrays, compiler/opcache, mysqlnd, libc, kernel network, page
faults, files, scheduling, the web server, MariaDB), the top PHP
functions (self and inclusive; WordPress plugins by name), the findings
with the knobs they point to, and each sampler's overhead: CPU per
request against the plain runs of the same rounds, with its interval.

Files go to -o DIR (default ./phptune-profile-TIME; a new directory, or an
empty one of yours only you can write, made before the lab starts): profile.json (every
figure and the folded stacks), native.folded and php.folded (the folded
format other flame graph tools read), profile.html (both flame graphs,
offline and searchable).

perf runs as root on a machine where it may sample every CPU; it reads
only binaries root alone could have written (mapped files of the lab's
own are left unnamed), and the lab's output (the PHP samples) is read as
hostile input. Without perf or its permission, the PHP profile is still
made and the reason is printed.`

// profileExample is phptune profile's examples.
const profileExample = `  phptune profile --app wordpress -c 8 -d 20s
  phptune profile --app strings --rounds 2
  phptune profile --lab mylab --php-clock wall`
