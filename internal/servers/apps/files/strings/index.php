<?php
// phptune app "strings": CPU-bound string processing (a few ms of PHP per
// request), standing for template rendering and text munging.
$words = explode(' ', trim(str_repeat('lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ', 150)));
$out = [];
foreach ($words as $i => $w) {
    $out[] = ucfirst(strrev($w)) . ($i % 7);
}
$text = implode(' ', $out);
for ($i = 0; $i < 40; $i++) {
    $text = str_replace(['a', 'e', 'o'], ['e', 'o', 'a'], $text);
    $text = strtolower($text);
    $text = ucwords($text);
}
$n = preg_match_all('/\b[A-Z][a-z]+\d\b/', $text, $m);
$counts = array_count_values($m[0]);
arsort($counts);
echo "strings ok words=$n distinct=" . count($counts) . " md5=" . md5($text) . "\n";
