package mariadb

import (
	"fmt"
	"strings"
)

// ProvisionSQL returns the statements that set the root password and
// create acct, run once right after the first start, while root still has
// no password. The lab feeds them to the mariadb client on its standard
// input, run as the lab's account, so no password is on a command line and
// root never connects to a socket the lab can replace. Names and passwords
// are phptune's own (letters, digits); anything else is refused.
func ProvisionSQL(rootPassword string, acct Account) (string, error) {
	for _, v := range []string{rootPassword, acct.DB, acct.User, acct.Password} {
		if v == "" || strings.IndexFunc(v, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
		}) >= 0 {
			return "", fmt.Errorf("provisioning MariaDB: %q is not a plain name or password", v)
		}
	}
	stmts := []string{
		fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s` CHARACTER SET utf8mb4", acct.DB),
		fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'localhost' IDENTIFIED BY '%s'", acct.User, acct.Password),
		fmt.Sprintf("GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'localhost'", acct.DB, acct.User),
		// The observer reads SHOW GLOBAL STATUS as the app user.
		fmt.Sprintf("GRANT PROCESS ON *.* TO '%s'@'localhost'", acct.User),
		fmt.Sprintf("ALTER USER 'root'@'localhost' IDENTIFIED BY '%s'", rootPassword),
		"FLUSH PRIVILEGES",
	}
	return strings.Join(stmts, ";\n") + ";\n", nil
}
