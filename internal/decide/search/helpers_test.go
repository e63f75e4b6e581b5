package search

// Functions only this package's tests use.

// PHPCeiling is the PHP-only ceiling the benchmark has reported since wave
// 1: cores ÷ php-fpm workers' CPU-seconds per request; 0 unknown.
func (u CPUUse) PHPCeiling() float64 {
	if u.PHPCPUPerReq <= 0 {
		return 0
	}
	return u.Cores / u.PHPCPUPerReq
}
