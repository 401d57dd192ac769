package chem

import (
	"strconv"
	"strings"
)

// element holds the periodic-table facts the toolkit needs. Values follow
// the RDKit periodic table (atomic weights, outer-shell electrons, most
// common isotope and its mass, allowed valences; -1 means "any valence",
// i.e. no implicit hydrogens are ever added).
type element struct {
	symbol   string
	weight   float64 // standard atomic weight
	nOuter   int     // outer-shell electrons
	isoMass  float64 // mass of the most common isotope
	valences []int   // allowed valences, ascending; {-1} means unrestricted
	early    bool    // element to the left of carbon (RDKit's isEarlyAtom)
}

// Columns: Z symbol weight outerElectrons mostCommonIsotopeMass valences...
const elementData = `
1 H 1.008 1 1.007825032 1
2 He 4.003 2 4.002603254 0
3 Li 6.941 1 7.01600455 1
4 Be 9.012 2 9.0121822 2
5 B 10.812 3 11.0093054 3
6 C 12.011 4 12 4
7 N 14.007 5 14.003074 3
8 O 15.999 6 15.99491462 2
9 F 18.998 7 18.99840322 1
10 Ne 20.18 8 19.99244018 0
11 Na 22.99 1 22.98976928 1
12 Mg 24.305 2 23.9850417 2
13 Al 26.982 3 26.98153863 3 6
14 Si 28.086 4 27.97692653 4 6
15 P 30.974 5 30.97376163 3 5 7
16 S 32.067 6 31.972071 2 4 6
17 Cl 35.453 7 34.96885268 1
18 Ar 39.948 8 39.96238312 0
19 K 39.098 1 38.96370668 1
20 Ca 40.078 2 39.96259098 2
21 Sc 44.956 3 44.9559119 -1
22 Ti 47.867 4 47.9479463 -1
23 V 50.942 5 49.9471585 -1
24 Cr 51.996 6 51.9405075 -1
25 Mn 54.938 7 54.9380451 -1
26 Fe 55.845 8 55.9349375 -1
27 Co 58.933 9 58.933195 -1
28 Ni 58.693 10 57.9353429 -1
29 Cu 63.546 11 62.9295975 -1
30 Zn 65.39 2 63.9291422 -1
31 Ga 69.723 3 68.9255736 3
32 Ge 72.61 4 73.9211778 4
33 As 74.922 5 74.9215965 3 5 7
34 Se 78.96 6 79.9165213 2 4 6
35 Br 79.904 7 78.9183371 1
36 Kr 83.8 8 83.911507 0
37 Rb 85.468 1 84.91178974 1
38 Sr 87.62 2 87.9056121 2
39 Y 88.906 3 88.9058483 -1
40 Zr 91.224 4 89.9047044 -1
41 Nb 92.906 5 92.9063781 -1
42 Mo 95.94 6 97.9054082 -1
43 Tc 98 7 96.906365 -1
44 Ru 101.07 8 101.9043493 -1
45 Rh 102.906 9 102.905504 -1
46 Pd 106.42 10 105.903486 -1
47 Ag 107.868 11 106.905097 -1
48 Cd 112.412 2 113.9033585 -1
49 In 114.818 3 114.903878 3
50 Sn 118.711 4 119.9021947 2 4
51 Sb 121.76 5 120.9038157 3 5 7
52 Te 127.6 6 129.9062244 2 4 6
53 I 126.904 7 126.904473 1 3 5
54 Xe 131.29 8 131.9041535 0 2 4 6
55 Cs 132.905 1 132.9054519 1
56 Ba 137.328 2 137.9052472 2
57 La 138.906 3 138.9063533 -1
58 Ce 140.116 4 139.9054387 -1
59 Pr 140.908 3 140.9076528 -1
60 Nd 144.24 4 141.9077233 -1
61 Pm 145 5 144.912749 -1
62 Sm 150.36 6 151.9197324 -1
63 Eu 151.964 7 152.9212303 -1
64 Gd 157.25 8 157.9241039 -1
65 Tb 158.925 9 158.9253468 -1
66 Dy 162.5 10 163.9291748 -1
67 Ho 164.93 11 164.9303221 -1
68 Er 167.26 12 165.9302931 -1
69 Tm 168.934 13 168.9342133 -1
70 Yb 173.04 14 173.9388621 -1
71 Lu 174.967 15 174.9407718 -1
72 Hf 178.49 4 179.94655 -1
73 Ta 180.948 5 180.9479958 -1
74 W 183.84 6 183.9509312 -1
75 Re 186.207 7 186.9557531 -1
76 Os 190.23 8 191.9614807 -1
77 Ir 192.217 9 192.9629264 -1
78 Pt 195.078 10 194.9647911 -1
79 Au 196.967 11 196.9665687 -1
80 Hg 200.59 2 201.970643 -1
81 Tl 204.383 3 204.9744275 3
82 Pb 207.2 4 207.9766521 2 4
83 Bi 208.98 5 208.9803987 3 5 7
84 Po 209 6 208.9824304 2 4 6
85 At 210 7 209.987148 1 3 5
86 Rn 222 8 210.990601 0
87 Fr 223 1 223.0197359 1
88 Ra 226 2 223.0185022 2
89 Ac 227 3 227.0277521 -1
90 Th 232.038 4 232.0380553 -1
91 Pa 231.036 3 231.035884 -1
92 U 238.029 4 238.0507882 -1
93 Np 237 5 236.04657 -1
94 Pu 244 6 238.0495599 -1
95 Am 243 7 241.0568291 -1
96 Cm 247 8 243.0613891 -1
97 Bk 247 9 247.070307 -1
98 Cf 251 10 249.0748535 -1
99 Es 252 11 252.08298 -1
100 Fm 257 12 257.095105 -1
101 Md 258 13 258.098431 -1
102 No 259 14 259.10103 -1
103 Lr 262 15 262.10963 -1
`

// earlyAtoms lists the elements RDKit treats as "left of carbon" when it
// adjusts allowed valences for formal charge.
var earlyAtoms = []int{3, 4, 5, 11, 12, 13, 19, 20, 21, 22, 30, 31, 32, 37, 38, 39, 40, 41,
	48, 49, 50, 51, 55, 56, 57, 58, 59, 60, 61, 72, 73, 80, 81, 82, 83, 87, 88, 89, 90, 91, 92, 93}

// isotopeMasses holds exact masses (u) of isotopes that appear in practice
// in labelled compounds; other isotopes fall back to the mass number.
var isotopeMasses = map[[2]int]float64{
	{1, 1}: 1.007825032, {1, 2}: 2.014101778, {1, 3}: 3.016049278,
	{6, 11}: 11.0114336, {6, 12}: 12, {6, 13}: 13.00335484, {6, 14}: 14.00324199,
	{7, 14}: 14.003074, {7, 15}: 15.0001089,
	{8, 16}: 15.99491462, {8, 17}: 16.9991317, {8, 18}: 17.999161,
	{9, 18}: 18.000938, {9, 19}: 18.99840322,
	{15, 31}: 30.97376163, {15, 32}: 31.97390727, {15, 33}: 32.9717255,
	{16, 32}: 31.972071, {16, 34}: 33.96786690, {16, 35}: 34.96903216,
	{17, 35}: 34.96885268, {17, 36}: 35.96830698, {17, 37}: 36.96590259,
	{35, 79}: 78.9183371, {35, 81}: 80.9162906, {35, 82}: 81.9168041,
	{53, 123}: 122.905589, {53, 125}: 124.9046302, {53, 127}: 126.904473, {53, 131}: 130.9061246,
}

var elements, symbolToZ, maxElementNum = loadElements()

func loadElements() (els [119]element, sym map[string]int, maxZ int) {
	sym = map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(elementData), "\n") {
		f := strings.Fields(line)
		z, _ := strconv.Atoi(f[0])
		e := element{symbol: f[1]}
		e.weight, _ = strconv.ParseFloat(f[2], 64)
		e.nOuter, _ = strconv.Atoi(f[3])
		e.isoMass, _ = strconv.ParseFloat(f[4], 64)
		for _, v := range f[5:] {
			n, _ := strconv.Atoi(v)
			e.valences = append(e.valences, n)
		}
		els[z] = e
		sym[e.symbol] = z
		if z > maxZ {
			maxZ = z
		}
	}
	for _, z := range earlyAtoms {
		els[z].early = true
	}
	els[0] = element{symbol: "*", valences: []int{-1}}
	return els, sym, maxZ
}

// defaultValence is the first allowed valence of element z (-1 if any).
func defaultValence(z int) int {
	if z < 0 || z > maxElementNum {
		return -1
	}
	return elements[z].valences[0]
}

// ElementSymbol returns the symbol of the element with atomic number z
// ("*" for 0, "" if unknown).
func ElementSymbol(z int) string {
	if z < 0 || z > maxElementNum {
		return ""
	}
	return elements[z].symbol
}

// AtomicWeight returns the standard atomic weight used for average
// molecular weight (RDKit's values).
func AtomicWeight(z int) float64 {
	if z < 0 || z > maxElementNum {
		return 0
	}
	return elements[z].weight
}

// isotopeMass returns the mass of isotope iso of element z.
func isotopeMass(z, iso int) float64 {
	if m, ok := isotopeMasses[[2]int{z, iso}]; ok {
		return m
	}
	return float64(iso)
}

// moreElectronegative reports RDKit's crude electronegativity ordering:
// more outer electrons wins, ties go to the lighter element.
func moreElectronegative(z1, z2 int) bool {
	n1, n2 := elements[z1].nOuter, elements[z2].nOuter
	if n1 != n2 {
		return n1 > n2
	}
	return z1 < z2
}
