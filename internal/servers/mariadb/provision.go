package mariadb

import (
	"fmt"
	"strings"
)

// ProvisionSQL returns the statements that drop the server's other
// accounts (DropOtherAccountsSQL), set the root password and create acct, run once right after the first start, while root still has
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
	return DropOtherAccountsSQL + strings.Join(stmts, ";\n") + ";\n", nil
}

// DropOtherAccountsSQL drops every account of a freshly installed server
// but root@localhost (which the statements before it give a password) and
// mariadb.sys (locked; the definer of the mysql.user view): with
// --auth-root-authentication-method=normal, mariadb-install-db also makes
// passwordless roots at 127.0.0.1, ::1 and the host's name, which any
// process of the lab could use. It is a compound statement for the
// mariadb client (DELIMITER), run before any account of the lab's own is
// made.
const DropOtherAccountsSQL = `USE mysql;
DELIMITER //
BEGIN NOT ATOMIC
  DECLARE done INT DEFAULT 0;
  DECLARE u, h VARCHAR(255);
  DECLARE c CURSOR FOR SELECT User, Host FROM phptune_drop;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1;
  CREATE TEMPORARY TABLE phptune_drop AS SELECT User, Host FROM mysql.global_priv
    WHERE NOT (User = 'root' AND Host = 'localhost') AND User <> 'mariadb.sys';
  OPEN c;
  drop_each: LOOP
    FETCH c INTO u, h;
    IF done THEN LEAVE drop_each; END IF;
    EXECUTE IMMEDIATE CONCAT('DROP USER ', QUOTE(u), '@', QUOTE(h));
  END LOOP;
  CLOSE c;
  DROP TEMPORARY TABLE phptune_drop;
END//
DELIMITER ;
`
