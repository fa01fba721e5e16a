
D
AddAddinput0input1"/job:localhost/replica:0/task:0*
T0

MulMulAddAdd*
T0
K
SubSubAddMul",/job:localhost/replica:0/task:0/device:CPU:1*
T0
1
input0Placeholder*
dtype0*
shape:
1
input1Placeholder*
dtype0*
shape:"