<?php
/*
 * phptune lab: the comment workload posts many comments from 127.0.0.1 in a
 * short time, which WordPress's flood and duplicate checks would refuse
 * ("You are posting comments too quickly"). The lab turns both off so the
 * workload measures comment handling, not WordPress's refusals.
 */
add_filter('wp_is_comment_flood', '__return_false', 100);
add_filter('duplicate_comment_id', '__return_false', 100);
