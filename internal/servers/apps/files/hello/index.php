<?php
// phptune app "hello": the smallest PHP response, to measure the stack itself.
echo "Hello, world!\n";
