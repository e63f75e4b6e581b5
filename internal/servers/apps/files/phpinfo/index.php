<?php
// phptune app "phpinfo": PHP's own information page (no database).
phpinfo();
