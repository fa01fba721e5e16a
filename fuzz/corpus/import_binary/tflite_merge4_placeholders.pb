
,
aPlaceholder*
dtype0*
shape:
,
bPlaceholder*
dtype0*
shape:
,
cPlaceholder*
dtype0*
shape:
,
dPlaceholder*
dtype0*
shape:
,
MergeMergeabcd*
N*
T0"