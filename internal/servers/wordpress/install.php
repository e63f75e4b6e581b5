<?php
// phptune: installs WordPress non-interactively and seeds it with a realistic
// amount of content, so the front page is not an empty blog. Run with php-cli:
//   PHPTUNE_WP_ADMIN_PASSWORD=... php install.php DOCROOT HOST
// (the password in the environment, not on the command line where ps shows it).
// Deterministic (seeded RNG) so every lab starts from the same content.
$adminPassword = getenv('PHPTUNE_WP_ADMIN_PASSWORD');
if ($argc !== 3 || $adminPassword === false || $adminPassword === '') {
    fwrite(STDERR, "usage: PHPTUNE_WP_ADMIN_PASSWORD=... install.php DOCROOT HOST\n");
    exit(2);
}
[$_, $docroot, $host] = $argv;
$_SERVER['HTTP_HOST'] = $host;
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
$_SERVER['REQUEST_METHOD'] = 'GET';
define('WP_INSTALLING', true);
require $docroot . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

$r = wp_install('phptune lab', 'admin', 'admin@example.invalid', true, '', wp_slash($adminPassword));
if (is_wp_error($r)) { fwrite(STDERR, $r->get_error_message() . "\n"); exit(1); }

update_option('permalink_structure', '/%year%/%monthnum%/%postname%/');
update_option('comment_moderation', 0);
update_option('comment_previously_approved', 0);
update_option('close_comments_for_old_posts', 0);
update_option('posts_per_page', 10);
// No mail: the lab has no MTA, and a failing sendmail per comment would be
// measured as comment handling.
update_option('comments_notify', 0);
update_option('moderation_notify', 0);
update_option('blogdescription', 'A WordPress seeded by phptune');
switch_theme('twentytwentythree');

mt_srand(42);
$words = explode(' ', 'php fpm nginx worker pool socket backlog opcache cache latency throughput memory process request '
    . 'server tuning benchmark queue children static dynamic ondemand kernel connection database query index page '
    . 'theme plugin content editor block image gallery comment reply author archive category tag season river '
    . 'mountain coffee morning garden window story letter music evening travel harbour');
function phptune_words(array $w, int $n): string {
    $out = [];
    for ($i = 0; $i < $n; $i++) { $out[] = $w[mt_rand(0, count($w) - 1)]; }
    return implode(' ', $out);
}
function phptune_paragraphs(array $w, int $n): string {
    $p = [];
    for ($i = 0; $i < $n; $i++) {
        $p[] = "<!-- wp:paragraph -->\n<p>" . ucfirst(phptune_words($w, mt_rand(40, 90))) . ".</p>\n<!-- /wp:paragraph -->";
    }
    return implode("\n\n", $p);
}

$cats = [];
foreach (['News', 'Engineering', 'Travel', 'Recipes', 'Opinion', 'Releases'] as $c) {
    $cats[] = wp_create_category($c);
}
$postIDs = [];
$t = strtotime('2022-01-03 09:00:00');
for ($i = 1; $i <= 60; $i++) {
    $t += mt_rand(3, 40) * 3600;
    $id = wp_insert_post([
        'post_title' => ucfirst(phptune_words($words, mt_rand(3, 8))),
        'post_content' => phptune_paragraphs($words, mt_rand(3, 8)),
        'post_excerpt' => '',
        'post_status' => 'publish',
        'post_author' => 1,
        'post_date' => date('Y-m-d H:i:s', $t),
        'post_category' => [$cats[mt_rand(0, count($cats) - 1)]],
        'tags_input' => [$words[mt_rand(0, 20)], $words[mt_rand(21, 40)]],
        'comment_status' => 'open',
    ], true);
    if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message() . "\n"); exit(1); }
    $postIDs[] = $id;
}
foreach (['About', 'Contact', 'Services', 'Team', 'Privacy', 'Archive', 'Press', 'Careers'] as $title) {
    wp_insert_post(['post_title' => $title, 'post_content' => phptune_paragraphs($words, 4),
        'post_status' => 'publish', 'post_type' => 'page', 'post_author' => 1]);
}
$comments = 0;
foreach ($postIDs as $pid) {
    $n = mt_rand(0, 10);
    for ($j = 0; $j < $n; $j++) {
        wp_insert_comment([
            'comment_post_ID' => $pid,
            'comment_author' => ucfirst($words[mt_rand(0, count($words) - 1)]) . ' ' . ucfirst($words[mt_rand(0, count($words) - 1)]),
            'comment_author_email' => 'reader' . mt_rand(1, 500) . '@example.invalid',
            'comment_content' => ucfirst(phptune_words($words, mt_rand(8, 40))) . '.',
            'comment_approved' => 1,
            'comment_author_IP' => '127.0.0.1',
        ]);
        $comments++;
    }
}
echo "installed: 60 posts, 8 pages, $comments comments, first post id " . $postIDs[0] . "\n";
