<?php
// phptune app "phpinfo": the page seed 000 measured.
phpinfo();
