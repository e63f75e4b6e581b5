<?php
// phptune app "io": a page that waits 20 ms on MariaDB, standing for an app
// that waits on a database or an API. Workers are idle while they wait, so
// the best pool is far larger than the core count.
$c = require getenv('PHPTUNE_DB_CONFIG');
$db = new mysqli('localhost', $c['user'], $c['password'], $c['db'], 0, $c['socket']);
$r = $db->query('SELECT SLEEP(0.02) AS s, 42 AS answer');
$row = $r->fetch_assoc();
echo "io ok answer=" . $row['answer'] . "\n";
